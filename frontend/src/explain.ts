/**
 * "Explain your answer" (`"explain": true` on a tree, Likert or comparative bucket): the worker's
 * reason for an answer, stored beside the targets as `answers[dialogue][bucket].explanation[target]`
 * (docs/worker-api.md, "Answer format"), checked as the server checks it.
 */
import { targetKeys, turnContext } from './context';
import type { Missing } from './require';
import { isPlainObject } from './tree';
import type { Answers, Bucket, Dialogue, Explanations } from './types';
import { DIALOGUE_TARGET } from './types';
import { clipText, hasNothingToAsk, isLongEnough, isValueComplete } from './values';

export const EXPLANATION_KEY = 'explanation';
export const EXPLAIN_QUESTION = 'Explain your answer';

/** The explanation written for one target ('' when none). */
export function explanationOf(values: Readonly<Record<string, unknown>> | undefined, target: string): string {
  const texts = values?.[EXPLANATION_KEY];
  const text = isPlainObject(texts) ? texts[target] : undefined;
  return typeof text === 'string' ? text : '';
}

/** A copy of `answers` with one explanation set ('' removes it, and an emptied object too). */
export function setExplanation(answers: Answers, dialogueKey: string, bucketName: string, target: string, text: string): Answers {
  const dialogue = { ...(answers[dialogueKey] ?? {}) };
  const values = { ...(dialogue[bucketName] ?? {}) };
  const old = values[EXPLANATION_KEY];
  const texts: Explanations = { ...(isPlainObject(old) ? (old as Explanations) : {}) };
  if (text === '') delete texts[target];
  else texts[target] = text;
  if (Object.keys(texts).length > 0) values[EXPLANATION_KEY] = texts;
  else delete values[EXPLANATION_KEY];
  dialogue[bucketName] = values;
  return { ...answers, [dialogueKey]: dialogue };
}

/** What the page keeps of restored explanations: texts for the bucket's targets, at most `explain_max_chars`. */
export function sanitizeExplanations(bucket: Bucket, raw: unknown, targets: string[]): Explanations | undefined {
  if (!bucket.explain || !isPlainObject(raw)) return undefined;
  const out: Explanations = {};
  for (const target of targets) {
    const text = raw[target];
    if (typeof text === 'string' && text !== '') out[target] = clipText(text, bucket.explain.max_chars);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** The explanations `explain_min_chars` still asks for: one per answered target whose text is too short. */
export function explanationsMissing(bucket: Bucket, dialogue: Dialogue, values: Readonly<Record<string, unknown>>): Missing[] {
  const limits = bucket.explain;
  if (!limits || limits.min_chars === 0) return [];
  const missing: Missing[] = [];
  for (const target of targetKeys(bucket, dialogue.key)) {
    const index = target === DIALOGUE_TARGET ? null : Number(target);
    const ctx = turnContext(dialogue, index, bucket, values);
    const value = values[target];
    const answered = value !== undefined && isValueComplete(bucket, value, ctx) && !hasNothingToAsk(bucket, value, ctx);
    if (answered && !isLongEnough(explanationOf(values, target), limits)) {
      missing.push({ turn: index, message: `explain your answer in at least ${limits.min_chars} characters` });
    }
  }
  return missing;
}
