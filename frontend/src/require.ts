/**
 * Completeness of a step, mirroring the server's `require` rules (docs/worker-api.md, "Require
 * rules"). Pure: the page uses it to enable Next/Submit and to tell the worker what is missing.
 *
 * - `require.level == "turn"`: every target turn has a complete value (a dialogue-level bucket:
 *   its `"dialogue"` value is complete).
 * - `require.level == "dialogue"`: a dialogue-level bucket has a complete `"dialogue"` value; a
 *   turn-level bucket has at least one complete turn value among the turns with something to ask
 *   (nothing is required when no target turn has anything to ask).
 * - no `require`: nothing is missing.
 */
import { targetsOf, turnContext } from './context';
import { questionLabel, turnNumber, type Show } from './display';
import type { Answers, Bucket, Dialogue, Unit } from './types';
import { DIALOGUE_TARGET } from './types';
import { explanationsMissing } from './explain';
import { hasNothingToAsk, isDialogueLevel, textRequest, valueGaps, type ValueGap } from './values';

export interface Missing {
  /** Turn index (0-based) the item belongs to, or null for the dialogue as a whole. */
  turn: number | null;
  message: string;
}

const identity: Show = (s) => s;

export function describeGap(gap: ValueGap, show: Show = identity): string {
  switch (gap.kind) {
    case 'radio':
      return `answer '${questionLabel(gap.question, show)}'`;
    case 'checkbox':
      return `review '${questionLabel(gap.question, show)}'`;
    case 'unvisited':
      return 'open this turn and review it';
    case 'rating':
      return `rate '${show(gap.text)}'`;
    case 'choice':
      return `answer '${show(gap.question)}'`;
    case 'text':
      return `answer ${textRequest(show(gap.question), gap.limits)}`;
  }
}

export function formatMissing(m: Missing): string {
  return m.turn === null ? capitalize(m.message) : `Turn ${turnNumber(m.turn)}: ${m.message}`;
}

function capitalize(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * What the worker still has to do for one bucket of one dialogue (empty when complete): what its
 * `require` asks for, then the explanations `explain_min_chars` asks for. An absent tree value is
 * checked as `{}`: a turn whose every question is hidden is complete.
 */
export function bucketMissing(
  bucket: Bucket,
  dialogue: Dialogue,
  bucketAnswers: Record<string, unknown> | undefined,
  show: Show = identity,
): Missing[] {
  return [...requireMissing(bucket, dialogue, bucketAnswers, show), ...explanationsMissing(bucket, dialogue, bucketAnswers ?? {})];
}

function requireMissing(
  bucket: Bucket,
  dialogue: Dialogue,
  bucketAnswers: Record<string, unknown> | undefined,
  show: Show,
): Missing[] {
  const level = bucket.require?.level;
  if (level !== 'turn' && level !== 'dialogue') return [];
  const values = bucketAnswers ?? {};

  if (isDialogueLevel(bucket)) {
    return valueGaps(bucket, values[DIALOGUE_TARGET], turnContext(dialogue, null, bucket, values)).map((g) => ({
      turn: null,
      message: describeGap(g, show),
    }));
  }

  const targets = targetsOf(bucket, dialogue.key);
  if (level === 'turn') {
    const missing: Missing[] = [];
    for (const index of targets) {
      for (const g of valueGaps(bucket, values[String(index)], turnContext(dialogue, index, bucket, values))) {
        missing.push({ turn: index, message: describeGap(g, show) });
      }
    }
    return missing;
  }

  // level === 'dialogue' on a turn-level bucket: at least one complete turn that asks something.
  const answerable = targets.filter(
    (index) => !hasNothingToAsk(bucket, values[String(index)], turnContext(dialogue, index, bucket, values)),
  );
  if (answerable.length === 0) return [];
  const anyComplete = answerable.some(
    (index) => valueGaps(bucket, values[String(index)], turnContext(dialogue, index, bucket, values)).length === 0,
  );
  if (anyComplete) return [];
  const numbers = answerable.map(turnNumber);
  const list = numbers.length === 1 ? `turn ${numbers[0]}` : `one of turns ${numbers.join(', ')}`;
  return [{ turn: null, message: `answer at least ${list} completely` }];
}

/** Missing items of a step (one dialogue × one bucket). */
export function stepMissing(
  unit: Unit,
  dialogueKey: string,
  bucketName: string,
  answers: Answers,
  show: Show = identity,
): Missing[] {
  const dialogue = unit.dialogues.find((d) => d.key === dialogueKey);
  const bucket = unit.buckets[bucketName];
  if (!dialogue || !bucket) return [];
  return bucketMissing(bucket, dialogue, answers[dialogueKey]?.[bucketName], show);
}

export function isStepComplete(unit: Unit, dialogueKey: string, bucketName: string, answers: Answers): boolean {
  return stepMissing(unit, dialogueKey, bucketName, answers).length === 0;
}
