/**
 * The annotations of a chat unit while the worker works (docs/chat-api.md, "Annotations during
 * and after chats"): the labels not sent yet, the offline answers (one answers object for the
 * whole unit, keyed by dialogue key) and the offline step shown, all saved in the unit's draft
 * (`answers.online` beside the dialogue keys; `position` = `{step, finished, timings}`).
 */
import { useCallback, useMemo, useState } from 'react';
import { buildSteps, restoredStep, type Step } from './answers';
import type { Problem } from './api';
import {
  endedDialogues,
  hasAnnotations,
  offlineUnit,
  pendingEntry,
  restoreChatDraft,
  type OnlineLabels,
} from './chatAnnotations';
import { stepMissing } from './require';
import { useStepTimings } from './timings';
import type { Answers, BucketValue, ChatState, OfflineDialogue, Unit } from './types';
import { useDraftSaver } from './useDraftSaver';

interface Options {
  unit: Unit;
  chat: ChatState;
  token: string;
  /** False once the unit is submitted or stopped: nothing more is saved. */
  enabled: boolean;
  draftDebounceMs?: number;
}

/** The offline dialogues shown now: one entry's after its chat, or all of them to fix a refused submit. */
interface Shown {
  unit: Unit;
  steps: Step[];
}

/** What identifies the shown dialogues (their conversations have ended and no longer change). */
function shownKey(reviewing: boolean, dialogues: OfflineDialogue[]): string {
  return JSON.stringify([reviewing, dialogues]);
}

function shownOf(unit: Unit, chat: ChatState, dialogues: OfflineDialogue[]): Shown | null {
  if (dialogues.length === 0) return null;
  const shown = offlineUnit(unit, chat, dialogues);
  return { unit: shown, steps: buildSteps(shown) };
}

export function useChatAnnotations({ unit, chat, token, enabled, draftDebounceMs }: Options) {
  const [restored] = useState(() => restoreChatDraft(unit, chat));
  const [online, setOnline] = useState<OnlineLabels>(restored.online);
  const [answers, setAnswers] = useState<Answers>(restored.answers);
  const [finished, setFinished] = useState<number[]>(restored.finished);
  const [reviewing, setReviewing] = useState(false);

  const pending = pendingEntry(chat, finished);
  const dialogues = reviewing ? endedDialogues(chat) : (pending?.dialogues ?? []);
  const key = shownKey(reviewing, dialogues);
  // Built again only when the shown dialogues change (`key`), not on every chat event.
  const shown = useMemo(() => shownOf(unit, chat, dialogues), [unit, key]);

  // The step within `shown` (1..N); newly shown dialogues start at their first step.
  const [stepAt, setStepAt] = useState(() => ({
    key,
    index: shown
      ? Math.max(1, restoredStep(restored.position, shown.steps.map((s) => stepMissing(shown.unit, s.dialogueKey, s.bucketName, answers))))
      : 0,
  }));
  const stepIndex = shown === null ? 0 : stepAt.key === key ? stepAt.index : 1;
  const goToStep = useCallback(
    (index: number) => setStepAt({ key, index: Math.max(1, Math.min(index, shown?.steps.length ?? 0)) }),
    [key, shown],
  );

  const current = shown && stepIndex > 0 ? (shown.steps[stepIndex - 1] ?? null) : null;
  const timingsAt = useStepTimings(current, restored.timings);

  const draft = useMemo(() => ({ ...answers, online }), [answers, online]);
  const position = useMemo(() => ({ step: stepIndex, finished }), [stepIndex, finished]);
  const stamp = useCallback((p: { step: number }) => ({ ...p, timings: timingsAt(Date.now()) }), [timingsAt]);
  // Every chat ended and annotated: the unit is being submitted, and a draft sent now could
  // reach the server after the submit (which refuses it).
  const allDone = chat.current === null && shown === null && !reviewing;
  const saver = useDraftSaver({
    unitId: unit.unit_id,
    token,
    answers: draft,
    position,
    enabled: enabled && hasAnnotations(chat) && !allDone,
    stamp,
    debounceMs: draftDebounceMs,
  });

  const setLabel = useCallback(
    (position: number, index: number, fn: (old: unknown) => BucketValue | undefined) =>
      setOnline((o) => {
        const old = o[position]?.[index];
        const next = fn(old);
        if (next === old) return o;
        const labels = { ...o[position] };
        if (next === undefined) delete labels[index];
        else labels[index] = next;
        const out: OnlineLabels = { ...o, [position]: labels };
        if (Object.keys(labels).length === 0) delete out[position];
        return out;
      }),
    [],
  );
  /** The label was sent, or the chance to send it passed: it is no longer kept. */
  const dropLabel = useCallback((position: number, index: number) => setLabel(position, index, () => undefined), [setLabel]);

  /** The worker finished the shown entry's steps. */
  const finish = useCallback(() => {
    if (pending) setFinished((f) => (f.includes(pending.after) ? f : [...f, pending.after]));
  }, [pending]);

  /** A refused submit: every offline dialogue is shown again, at the step the first problem names. */
  const review = useCallback(
    (problem: Problem | undefined) => {
      const all = endedDialogues(chat);
      const steps = shownOf(unit, chat, all)?.steps ?? [];
      const at = steps.findIndex((s) => s.dialogueKey === problem?.dialogue && s.bucketName === problem?.bucket);
      setReviewing(true);
      setStepAt({ key: shownKey(true, all), index: at + 1 || 1 });
    },
    [unit, chat],
  );

  return {
    online,
    setLabel,
    dropLabel,
    answers,
    update: setAnswers,
    /** The offline dialogues to annotate now, as a unit with its steps; null while chatting. */
    shown,
    stepIndex,
    goToStep,
    finish,
    /** Every offline dialogue is shown to fix a refused submit; its last step submits. */
    reviewing,
    review,
    timingsAt,
    saver,
  };
}
