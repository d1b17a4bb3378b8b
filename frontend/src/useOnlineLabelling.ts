/**
 * The online labels a chat or an arena battle sends with the worker's next step (docs/chat-api.md,
 * "Online labels"): the label of each conversation's latest bot message, the labelling each
 * conversation shows, and the server's refusal of a label (422), shown under that label.
 */
import { useMemo, useState } from 'react';
import { ApiError } from './api';
import { holdsNothing } from './answers';
import { labelTarget, onlineValues, onlineView, type OnlineLabels } from './chatAnnotations';
import type { SubmitError } from './components/AnnotationSteps';
import type { Labelling } from './components/ReplyLabels';
import { speakerNames } from './display';
import type { BucketValue, ChatState, Conversation, Unit } from './types';

/** The label sent with the next step: for bot message `index`, `value` (nothing when empty). */
export interface SentLabel {
  index: number;
  value: BucketValue | undefined;
}

interface Labels {
  online: OnlineLabels;
  setLabel: (position: number, index: number, fn: (old: unknown) => BucketValue | undefined) => void;
}

export function useOnlineLabelling(unit: Unit, chat: ChatState, labels: Labels) {
  const online = chat.annotations?.online ?? null;
  const bucket = online ? unit.buckets[online.bucket] : undefined;
  const names = useMemo(() => speakerNames(unit.speaker_names), [unit]);
  // The refused label's conversation (null: any), and why.
  const [refusal, setRefusal] = useState<{ position: number | null; error: SubmitError } | null>(null);

  /** The label that goes with the next step: the latest bot message's, if it has none yet. */
  const labelFor = (c: Conversation): SentLabel | null => {
    const target = bucket ? labelTarget(c) : null;
    if (!target) return null;
    const value = labels.online[c.position]?.[target.index];
    return { index: target.index, value: holdsNothing(value) ? undefined : value };
  };

  /** Shows a refused label (422) under conversation `position`'s label; false for any other failure. */
  const refused = (e: unknown, labelled: boolean, position: number | null = null): boolean => {
    if (!labelled || !(e instanceof ApiError) || e.status !== 422) return false;
    setRefusal({ position, error: { message: e.message, problems: e.problems } });
    return true;
  };

  const labellingOf = (c: Conversation): Labelling | null =>
    online && bucket
      ? {
          bucketName: online.bucket,
          view: onlineView(bucket, c),
          values: onlineValues(c, labels.online[c.position]),
          required: online.required,
          names,
          setLabel: (index, fn) => labels.setLabel(c.position, index, fn),
          refusal: refusal && (refusal.position === null || refusal.position === c.position) ? refusal.error : null,
        }
      : null;

  return { labelFor, refused, clearRefusal: () => setRefusal(null), labellingOf };
}
