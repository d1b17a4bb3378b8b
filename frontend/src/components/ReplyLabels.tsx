/**
 * The online labels of one conversation's bot messages (docs/chat-api.md, "Online labels"), as
 * a chat and each pane of an arena battle show them: the label form under the latest reply, the
 * stored labels under the earlier ones, the hint of what a required label still misses and the
 * bucket's instructions.
 */
import { useId, useMemo, useState, type ReactNode } from 'react';
import { labelContext, labelMissing, labelTarget, type OnlineView } from '../chatAnnotations';
import { bucketTitle, makeShowHtml, placeholderNames, showFor, type SpeakerNames } from '../display';
import type { BucketValue, ChatMessage, Conversation } from '../types';
import type { SubmitError } from './AnnotationSteps';
import { InstructionsDialog } from './InstructionsDialog';
import { LabelHint, OnlineLabel, StoredLabel } from './OnlineLabel';

/** The online labels of a conversation (units with `annotations.online`). */
export interface Labelling {
  bucketName: string;
  view: OnlineView;
  /** The stored labels and the unsent ones, by message index. */
  values: Record<string, BucketValue>;
  /** The latest bot message must be labelled before the worker moves on. */
  required: boolean;
  names: SpeakerNames;
  setLabel: (index: number, fn: (old: unknown) => BucketValue | undefined) => void;
  /** The server refused the label last sent (422). */
  refusal: SubmitError | null;
}

export interface ReplyLabels {
  /** What to show under a message (for ChatLog), when the conversation is labelled. */
  renderLabel?: (message: ChatMessage) => ReactNode;
  /** A required label is incomplete: the worker may not move on. */
  blocked: boolean;
  /** The id of `hint`, for the controls it blocks. */
  hintId: string;
  /** What the required label still misses, in words. */
  hint: ReactNode;
  /** The bucket's instructions, opened from the label form. */
  dialog: ReactNode;
}

export function useReplyLabels(conversation: Conversation, labelling: Labelling | null): ReplyLabels {
  const hintId = useId();
  const dialogId = useId();
  const [helpOpen, setHelpOpen] = useState(false);
  const names = labelling?.names;
  const show = useMemo(() => (names ? showFor(names, 'system') : (s: string) => s), [names]);
  const showHtml = useMemo(() => makeShowHtml(names ? placeholderNames(names, null) : null), [names]);

  const bucket = labelling?.view.bucket;
  const help = bucket?.instructions_html ? { dialogId, open: () => setHelpOpen(true) } : null;
  const target = labelling ? labelTarget(conversation) : null;
  // The partner's messages are counted on their own: "Partner's message 2" is its second one.
  const messageName = (index: number) =>
    `${conversation.partner}'s message ${conversation.messages.filter((m) => m.role === 'bot' && m.index <= index).length}`;
  const missing =
    labelling?.required && target ? labelMissing(labelling.view, target.index, labelling.values, show) : [];
  const blocked = missing.length > 0;

  const renderLabel = (m: ChatMessage) => {
    if (!labelling || !bucket || m.role !== 'bot') return null;
    if (m.labels != null) return <StoredLabel bucket={bucket} value={m.labels} show={show} />;
    if (m.index !== target?.index) return null;
    return (
      <OnlineLabel
        name={messageName(m.index)}
        bucket={bucket}
        turn={labelContext(labelling.view, m.index, labelling.values)}
        value={labelling.values[String(m.index)]}
        show={show}
        help={help}
        setValue={(fn) => labelling.setLabel(m.index, fn)}
        refusal={labelling.refusal}
      />
    );
  };

  return {
    renderLabel: labelling ? renderLabel : undefined,
    blocked,
    hintId,
    hint: blocked && target ? <LabelHint id={hintId} name={messageName(target.index)} missing={missing} /> : null,
    dialog: bucket ? (
      <InstructionsDialog
        id={dialogId}
        open={helpOpen}
        title={`Instructions: ${bucketTitle(bucket.task_title || labelling.bucketName)}`}
        html={showHtml(bucket.instructions_html ?? '')}
        onClose={() => setHelpOpen(false)}
      />
    ) : null,
  };
}
