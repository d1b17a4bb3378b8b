/**
 * The context `_dep_` conditions see (dependencies.ts): the annotated turn, the bucket's target
 * turns and its values in the dialogue so far, and keeping later turns consistent when an earlier
 * one changes (`boolPrevTurnExpect` looks at the previous target turn).
 */
import type { DepContext } from './dependencies';
import { isPlainObject, normalizeTree } from './tree';
import type { Answers, Bucket, BucketAnswers, Dialogue } from './types';
import { DIALOGUE_TARGET } from './types';
import { isDialogueLevel, isTreeBucket } from './values';

export function targetsOf(bucket: Bucket, dialogueKey: string): number[] {
  if (isDialogueLevel(bucket)) return [];
  const t = bucket.targets?.[dialogueKey];
  return Array.isArray(t) ? t : [];
}

/** The keys a bucket's values have in one dialogue: `"dialogue"`, or its target turns as strings. */
export function targetKeys(bucket: Bucket, dialogueKey: string): string[] {
  return isDialogueLevel(bucket) ? [DIALOGUE_TARGET] : targetsOf(bucket, dialogueKey).map(String);
}

/**
 * The context of one target (`index` null for the `"dialogue"` value). `values` are the bucket's
 * values in this dialogue (`answers[dialogue.key][bucketName]`), read for earlier turns only.
 */
export function turnContext(
  dialogue: Dialogue,
  index: number | null,
  bucket: Bucket,
  values: Readonly<Record<string, unknown>> | undefined,
): DepContext {
  if (index === null) return { speaker: null, index: null, targets: [], values: values ?? {} };
  const turn = dialogue.turns.find((t) => t.index === index) ?? dialogue.turns[index];
  return {
    speaker: turn ? turn.speaker : null,
    index,
    targets: [...targetsOf(bucket, dialogue.key)].sort((a, b) => a - b),
    values: values ?? {},
  };
}

/**
 * The bucket's values with every tree turn re-checked in order against the turns before it:
 * answers to questions that an earlier change hid are dropped (the server refuses them). Nothing
 * is added. Returns `values` itself when nothing changes.
 */
export function settleBucket(
  bucket: Bucket,
  dialogue: Dialogue,
  values: BucketAnswers,
): BucketAnswers {
  if (!isTreeBucket(bucket)) return values;
  let out = values;
  for (const index of [...targetsOf(bucket, dialogue.key)].sort((a, b) => a - b)) {
    const key = String(index);
    const value = out[key];
    if (!isPlainObject(value)) continue;
    const settled = normalizeTree(bucket.options, value, turnContext(dialogue, index, bucket, out), false);
    if (JSON.stringify(settled) !== JSON.stringify(value)) out = { ...out, [key]: settled };
  }
  return out;
}

/** `answers` with one step's bucket settled (see settleBucket); the same object when unchanged. */
export function settleStep(answers: Answers, bucket: Bucket, dialogue: Dialogue, bucketName: string): Answers {
  const values = answers[dialogue.key]?.[bucketName];
  if (!values) return answers;
  const settled = settleBucket(bucket, dialogue, values);
  if (settled === values) return answers;
  return { ...answers, [dialogue.key]: { ...answers[dialogue.key], [bucketName]: settled } };
}
