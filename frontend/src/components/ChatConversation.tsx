import { useId, useMemo, useState } from 'react';
import { canWrite, type OutgoingMessage } from '../chat';
import { labelContext, labelMissing, labelTarget, type OnlineView } from '../chatAnnotations';
import { bucketTitle, makeShowHtml, placeholderNames, showFor, type SpeakerNames } from '../display';
import type { BucketValue, ChatMessage, ChatState, Conversation } from '../types';
import type { SubmitError } from './AnnotationSteps';
import { ChatComposer } from './ChatComposer';
import { ChatLog } from './ChatLog';
import { InstructionsDialog } from './InstructionsDialog';
import { LabelHint, OnlineLabel, StoredLabel } from './OnlineLabel';

/** The online labels of a conversation (units with `annotations.online`). */
export interface Labelling {
  bucketName: string;
  view: OnlineView;
  /** The stored labels and the unsent ones, by message index. */
  values: Record<string, BucketValue>;
  /** The latest bot message must be labelled before the next message or END. */
  required: boolean;
  names: SpeakerNames;
  setLabel: (index: number, fn: (old: unknown) => BucketValue | undefined) => void;
  /** The server refused the label last sent (422). */
  refusal: SubmitError | null;
}

interface Props {
  chat: ChatState;
  conversation: Conversation;
  /** The worker's messages on their way, for this conversation. */
  outgoing: OutgoingMessage[];
  /** A request (end, retry) is under way. */
  busy: boolean;
  /** Why the worker's last action failed, in words. */
  problem: string | null;
  onSend: (text: string) => Promise<boolean>;
  onEnd: () => void;
  onRetry: () => void;
  labelling: Labelling | null;
}

/** What stops a conversation for good, told in place of the message box. */
function StoppedNotice({ conversation }: { conversation: Conversation }) {
  if (conversation.status === 'timed_out') {
    return (
      <div className="chat-alert" role="alert">
        <p>
          <strong>The time to answer ran out.</strong> This chat has ended and the task went back to the pool.
        </p>
        <p>Please open your task link again to get new work.</p>
      </div>
    );
  }
  return (
    <div className="chat-alert" role="alert">
      {conversation.error && <p>{conversation.error.message}</p>}
      <p>
        Your partner had a technical problem and this chat cannot continue. Please open your task link again.
      </p>
    </div>
  );
}

/** One conversation: the log, what the bot is doing, and what the worker can do now. */
export function ChatConversation({ chat, conversation, outgoing, busy, problem, onSend, onEnd, onRetry, labelling }: Props) {
  const { status, reply, error, partner } = conversation;
  const active = status === 'active';
  const typing = active && reply !== null && reply.text === '';
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
    `${partner}'s message ${conversation.messages.filter((m) => m.role === 'bot' && m.index <= index).length}`;
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

  return (
    <section className="chat">
      <ChatLog conversation={conversation} outgoing={outgoing} renderLabel={labelling ? renderLabel : undefined} />
      <p className="chat-typing" role="status">
        {typing ? `${partner} is typing…` : ''}
      </p>
      {active && error && (
        <div className="chat-alert" role="alert">
          <p>{error.message}</p>
          {error.retry && (
            <button type="button" className="btn btn-small" onClick={onRetry} disabled={busy}>
              Try again
            </button>
          )}
        </div>
      )}
      {(status === 'timed_out' || status === 'failed') && <StoppedNotice conversation={conversation} />}
      {problem && (
        <p className="chat-alert" role="alert">
          {problem}
        </p>
      )}
      {blocked && target && <LabelHint id={hintId} name={messageName(target.index)} missing={missing} />}
      {active && conversation.can_end && (
        <div className="chat-end">
          <p>
            You have written all {chat.num_turns} messages of this chat. Press <strong>End chat</strong> to finish it.
          </p>
          <button
            type="button"
            className="btn btn-primary"
            onClick={onEnd}
            disabled={busy || blocked}
            aria-describedby={blocked ? hintId : undefined}
          >
            End chat
          </button>
        </div>
      )}
      {active && (
        <ChatComposer
          enabled={canWrite(conversation, outgoing)}
          maxChars={chat.max_message_chars}
          blocked={blocked}
          describedBy={blocked ? hintId : undefined}
          onSend={onSend}
        />
      )}
      {bucket && (
        <InstructionsDialog
          id={dialogId}
          open={helpOpen}
          title={`Instructions: ${bucketTitle(bucket.task_title || labelling.bucketName)}`}
          html={showHtml(bucket.instructions_html ?? '')}
          onClose={() => setHelpOpen(false)}
        />
      )}
    </section>
  );
}
