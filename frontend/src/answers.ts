/** Steps of a unit and immutable operations on the answers object. */
import { isPlainObject } from './tree';
import { targetKeys, turnContext } from './context';
import { EXPLANATION_KEY, sanitizeExplanations } from './explain';
import type { Answers, BucketValue, Unit } from './types';
import { DIALOGUE_TARGET } from './types';
import { sanitizeValue } from './values';

export interface Step {
  dialogueKey: string;
  bucketName: string;
}

/** One step per (dialogue × each of its annotation tasks), in the server's order. */
export function buildSteps(unit: Unit): Step[] {
  const steps: Step[] = [];
  for (const d of unit.dialogues) {
    for (const name of d.annotation_tasks ?? []) {
      if (unit.buckets[name]) steps.push({ dialogueKey: d.key, bucketName: name });
      else console.error(`Dialogue ${d.key} lists unknown bucket "${name}"`);
    }
  }
  return steps;
}

/**
 * The step to resume at from a draft's `position` (`{"step": k}`), never past the first
 * incomplete step. `missingByStep[k - 1]` is what step k still misses.
 */
export function restoredStep(position: unknown, missingByStep: ReadonlyArray<readonly unknown[]>): number {
  const saved = isPlainObject(position) && typeof position.step === 'number' && Number.isInteger(position.step) ? position.step : 0;
  const firstIncomplete = missingByStep.findIndex((m) => m.length > 0);
  const reachable = firstIncomplete === -1 ? missingByStep.length : firstIncomplete + 1;
  return Math.max(0, Math.min(saved, reachable));
}

export function getValue(answers: Answers, dialogueKey: string, bucketName: string, target: string): unknown {
  return answers[dialogueKey]?.[bucketName]?.[target];
}

/** A copy of `answers` with one value set (or removed when `value` is undefined). */
export function setValue(
  answers: Answers,
  dialogueKey: string,
  bucketName: string,
  target: string,
  value: BucketValue | undefined,
): Answers {
  const dialogue = { ...(answers[dialogueKey] ?? {}) };
  const bucket = { ...(dialogue[bucketName] ?? {}) };
  if (value === undefined) delete bucket[target];
  else bucket[target] = value;
  dialogue[bucketName] = bucket;
  return { ...answers, [dialogueKey]: dialogue };
}

/**
 * Keep only what fits the unit: known dialogues, buckets the dialogue lists, the bucket's targets,
 * and values of the right shape (used on drafts restored from the server).
 */
export function sanitizeAnswers(unit: Unit, raw: unknown): Answers {
  const out: Answers = {};
  if (!isPlainObject(raw)) return out;
  for (const d of unit.dialogues) {
    const rawDialogue = raw[d.key];
    if (!isPlainObject(rawDialogue)) continue;
    for (const name of d.annotation_tasks ?? []) {
      const bucket = unit.buckets[name];
      const rawBucket = rawDialogue[name];
      if (!bucket || !isPlainObject(rawBucket)) continue;
      const targets = targetKeys(bucket, d.key);
      for (const target of targets) {
        if (!(target in rawBucket)) continue;
        const ctx = turnContext(d, target === DIALOGUE_TARGET ? null : Number(target), bucket, out[d.key]?.[name]);
        const value = sanitizeValue(bucket, rawBucket[target], ctx);
        if (value !== undefined) {
          out[d.key] ??= {};
          out[d.key][name] ??= {};
          out[d.key][name][target] = value;
        }
      }
      const explanations = sanitizeExplanations(bucket, rawBucket[EXPLANATION_KEY], targets);
      if (explanations) {
        out[d.key] ??= {};
        out[d.key][name] ??= {};
        out[d.key][name][EXPLANATION_KEY] = explanations;
      }
    }
  }
  return out;
}

/**
 * A value that holds nothing (absent, an opened but unanswered tree turn, a rating object
 * without ratings, an empty text): submissions leave it out. `[]` (multiselect: none apply)
 * holds an answer.
 */
export function holdsNothing(value: unknown): boolean {
  return value === undefined || value === '' || (isPlainObject(value) && Object.keys(value).length === 0);
}

/** The answers as submitted: values that hold nothing and empty containers are left out. */
export function answersForSubmit(answers: Answers): Answers {
  const out: Answers = {};
  for (const [dk, buckets] of Object.entries(answers)) {
    for (const [bn, values] of Object.entries(buckets)) {
      for (const [target, value] of Object.entries(values)) {
        if (holdsNothing(value)) continue;
        out[dk] ??= {};
        out[dk][bn] ??= {};
        out[dk][bn][target] = value;
      }
    }
  }
  return out;
}
