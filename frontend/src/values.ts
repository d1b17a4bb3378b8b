/**
 * Per-config knowledge about bucket options and answer values (docs/worker-api.md, "Answer
 * format"). Pure functions only.
 */
import type { DepContext } from './dependencies';
import { isPlainObject, normalizeTree, treeGaps } from './tree';
import type { Bucket, BucketValue, ForeachOption, LikertOption, MultiselectOption, TextLimits } from './types';
import { TREE_CONFIGS } from './types';

export const SCALE = [1, 2, 3, 4, 5] as const;

export function isTreeBucket(bucket: Bucket): boolean {
  return TREE_CONFIGS.has(bucket.config);
}

export function isDialogueLevel(bucket: Bucket): boolean {
  return bucket.level === 'dialogue';
}

/** Multiselect options offered for a turn: those without `speaker`, or whose speaker matches. */
export function multiselectOptions(bucket: Bucket, speaker: string | null): MultiselectOption[] {
  if (!Array.isArray(bucket.options)) return [];
  return (bucket.options as MultiselectOption[]).filter(
    (o) =>
      isPlainObject(o) &&
      typeof o.value === 'string' &&
      (o.speaker === undefined || o.speaker === null || o.speaker === speaker),
  );
}

export function likertOptions(bucket: Bucket): LikertOption[] {
  if (!Array.isArray(bucket.options)) return [];
  return (bucket.options as LikertOption[]).filter((o) => isPlainObject(o) && typeof o.label === 'string');
}

export function foreachOptions(bucket: Bucket): ForeachOption[] {
  if (!Array.isArray(bucket.options)) return [];
  return (bucket.options as ForeachOption[]).filter((o) => isPlainObject(o) && typeof o.value === 'string');
}

export function comparativeOptions(bucket: Bucket): string[] {
  if (!Array.isArray(bucket.options)) return [];
  return (bucket.options as unknown[]).filter((o): o is string => typeof o === 'string');
}

/** The keys a rating bucket's value is made of: likert option labels or foreach option values. */
export function ratingKeys(bucket: Bucket): string[] {
  if (bucket.config === 'likert-5-turn' || bucket.config === 'likert-5-dialogue') {
    return likertOptions(bucket).map((o) => o.label);
  }
  return foreachOptions(bucket).map((o) => o.value);
}

export function isRatingBucket(bucket: Bucket): boolean {
  return (
    bucket.config === 'likert-5-turn' ||
    bucket.config === 'likert-5-dialogue' ||
    bucket.config === 'foreach-5-select' ||
    bucket.config === 'foreach-5-select-dialogue'
  );
}

/** Characters of a text as the server counts them (code points), without the spaces around it. */
export function textLength(text: string): number {
  return [...text.trim()].length;
}

/** A text counts as an answer once it has `min_chars` characters (at least one) besides spaces. */
export function isLongEnough(text: unknown, limits: TextLimits): text is string {
  return typeof text === 'string' && textLength(text) >= Math.max(limits.min_chars, 1);
}

/** At most `max` characters (code points) of `text`, as the server allows. */
export function clipText(text: string, max: number): string {
  const chars = [...text];
  return chars.length > max ? chars.slice(0, max).join('') : text;
}

/** What the worker is asked to write: the question, and how much when `min_chars` asks for more. */
export function textRequest(question: string, limits: TextLimits): string {
  return limits.min_chars > 1 ? `'${question}' in at least ${limits.min_chars} characters` : `'${question}'`;
}

function isRating(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 5;
}

/**
 * The valid part of a value (e.g. restored from a draft), or undefined when nothing of it is
 * valid for this bucket.
 */
export function sanitizeValue(bucket: Bucket, value: unknown, turn: DepContext): BucketValue | undefined {
  if (bucket.text) return typeof value === 'string' ? clipText(value, bucket.text.max_chars) : undefined;
  if (isTreeBucket(bucket)) {
    if (!isPlainObject(value)) return undefined;
    return normalizeTree(bucket.options, value, turn);
  }
  if (bucket.config === 'multiselect') {
    if (!Array.isArray(value)) return undefined;
    const offered = new Set(multiselectOptions(bucket, turn.speaker).map((o) => o.value));
    return [...new Set(value.filter((v): v is string => typeof v === 'string' && offered.has(v)))];
  }
  if (isRatingBucket(bucket)) {
    if (!isPlainObject(value)) return undefined;
    const out: Record<string, number> = {};
    for (const key of ratingKeys(bucket)) {
      if (isRating(value[key])) out[key] = value[key];
    }
    return out;
  }
  if (bucket.config === 'comparative') {
    return typeof value === 'string' && comparativeOptions(bucket).includes(value) ? value : undefined;
  }
  return undefined;
}

/** A missing piece of one value, described for the worker by `describeGap`. */
export type ValueGap =
  | { kind: 'radio' | 'checkbox'; question: string }
  | { kind: 'unvisited' }
  | { kind: 'rating'; key: string; text: string }
  | { kind: 'choice'; question: string }
  | { kind: 'text'; question: string; limits: TextLimits };

/** What keeps a value from being complete (empty when complete). */
export function valueGaps(bucket: Bucket, value: unknown, turn: DepContext): ValueGap[] {
  if (bucket.text) {
    return isLongEnough(value, bucket.text) ? [] : [{ kind: 'text', question: bucket.question ?? '', limits: bucket.text }];
  }
  if (isTreeBucket(bucket)) {
    const gaps = treeGaps(bucket.options, value, turn);
    if (value === undefined && gaps.some((g) => g.kind === 'checkbox')) {
      // Opening the turn fills the checkbox entries: name only what needs an answer.
      const radios = gaps.filter((g) => g.kind === 'radio');
      return radios.length > 0 ? radios : [{ kind: 'unvisited' }];
    }
    return gaps;
  }
  if (bucket.config === 'multiselect') {
    return Array.isArray(value) ? [] : [{ kind: 'unvisited' }];
  }
  if (isRatingBucket(bucket)) {
    const v = isPlainObject(value) ? value : {};
    if (bucket.config === 'likert-5-turn' || bucket.config === 'likert-5-dialogue') {
      return likertOptions(bucket)
        .filter((o) => !isRating(v[o.label]))
        .map((o) => ({ kind: 'rating' as const, key: o.label, text: o.question || o.label }));
    }
    return foreachOptions(bucket)
      .filter((o) => !isRating(v[o.value]))
      .map((o) => ({ kind: 'rating' as const, key: o.value, text: o.label || o.value }));
  }
  if (bucket.config === 'comparative') {
    const ok = typeof value === 'string' && comparativeOptions(bucket).includes(value);
    return ok ? [] : [{ kind: 'choice', question: bucket.question || 'Which dialogue?' }];
  }
  return [];
}

/**
 * A tree turn with nothing to ask: no answer given and every question hidden (`_dep_`). It is
 * complete, but does not count as "one turn answered" for `require.level: dialogue`.
 */
export function hasNothingToAsk(bucket: Bucket, value: unknown, turn: DepContext): boolean {
  const empty = value === undefined || (isPlainObject(value) && Object.keys(value).length === 0);
  return isTreeBucket(bucket) && empty && treeGaps(bucket.options, {}, turn).length === 0;
}

export function isValueComplete(bucket: Bucket, value: unknown, turn: DepContext): boolean {
  return valueGaps(bucket, value, turn).length === 0;
}

/**
 * A value in words, for showing an answer already given: the chosen tree answers, the chosen
 * labels, or each rating ("Quality: 4"). `speaker` is the annotated turn's.
 */
export function valueText(bucket: Bucket, value: unknown, speaker: string | null, show: (text: string) => string): string {
  const parts: string[] = [];
  if (isTreeBucket(bucket)) {
    const walk = (level: unknown) => {
      if (!isPlainObject(level)) return;
      for (const answers of Object.values(level)) {
        if (!isPlainObject(answers)) continue;
        for (const [answer, sub] of Object.entries(answers)) {
          parts.push(show(answer));
          walk(sub);
        }
      }
    };
    walk(value);
  } else if (bucket.config === 'multiselect') {
    if (Array.isArray(value)) {
      const chosen = new Set(value);
      for (const o of multiselectOptions(bucket, speaker)) if (chosen.has(o.value)) parts.push(show(o.label ?? o.value));
      if (parts.length === 0) return 'none apply';
    }
  } else if (isRatingBucket(bucket) && isPlainObject(value)) {
    const likert = bucket.config === 'likert-5-turn' || bucket.config === 'likert-5-dialogue';
    const named = likert
      ? likertOptions(bucket).map((o) => [o.label, o.label] as const)
      : foreachOptions(bucket).map((o) => [o.value, o.label || o.value] as const);
    for (const [key, label] of named) if (isRating(value[key])) parts.push(`${show(label)}: ${value[key]}`);
  } else if (typeof value === 'string') {
    parts.push(show(value));
  }
  return parts.length > 0 ? parts.join('; ') : 'no answer';
}
