/**
 * The shared require table (tests/shared/require_cases.json at the repository root) against the
 * page's check; the server runs the same table (tests/test_require_cases.py).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settleBucket, targetKeys, turnContext } from '../src/context';
import { EXPLANATION_KEY, sanitizeExplanations } from '../src/explain';
import { bucketMissing } from '../src/require';
import type { Bucket, BucketAnswers, Dialogue, TextLimits } from '../src/types';
import { DIALOGUE_TARGET } from '../src/types';
import { isTreeBucket, sanitizeValue } from '../src/values';

interface Case {
  name: string;
  bucket: string | Record<string, unknown>;
  speakers: string[];
  targets: number[];
  answers: BucketAnswers;
  valid?: boolean;
  expected: { complete: boolean; missing: Array<number | null> };
}

const table = JSON.parse(
  readFileSync(resolve(__dirname, '../../tests/shared/require_cases.json'), 'utf-8'),
) as { buckets: Record<string, Record<string, unknown>>; cases: Case[] };

const DIALOGUE_CONFIGS = new Set(['likert-5-dialogue', 'foreach-5-select-dialogue', 'comparative']);

function limits(min: unknown, max: unknown, multiline: unknown = true): TextLimits {
  return { min_chars: (min as number) ?? 0, max_chars: (max as number) ?? 2000, multiline: multiline as boolean };
}

/** The bucket as the server sends it (GET /api/units: level, require, text limits, targets per dialogue). */
function publicBucket(c: Case): Bucket {
  const spec = typeof c.bucket === 'string' ? table.buckets[c.bucket] : c.bucket;
  const text = spec.config === 'text';
  const dialogueLevel = text ? (spec.indices ?? 'no_indices') === 'no_indices' : DIALOGUE_CONFIGS.has(spec.config as string);
  const level = dialogueLevel ? 'dialogue' : 'turn';
  return {
    config: spec.config,
    level,
    question: spec.question ?? null,
    options: spec.options ?? null,
    require: spec.require ?? null,
    text: text ? limits(spec.min_chars, spec.max_chars, spec.multiline ?? true) : null,
    explain: spec.explain ? limits(spec.explain_min_chars, spec.explain_max_chars) : null,
    targets: level === 'turn' ? { d: c.targets } : {},
  } as Bucket;
}

function dialogueOf(c: Case): Dialogue {
  return {
    key: 'd',
    turns: c.speakers.map((speaker, index) => ({ index, speaker, text: '' })),
    turns2: null,
    persona: null,
    annotation_tasks: ['b'],
  };
}

/**
 * What the page keeps of the values: trees settled turn by turn, other values of the bucket's
 * targets sanitized, explanations of its targets.
 */
function pageKeeps(bucket: Bucket, dialogue: Dialogue, values: BucketAnswers) {
  const targets = targetKeys(bucket, dialogue.key);
  const { [EXPLANATION_KEY]: explanations, ...given } = values;
  const out: BucketAnswers = {};
  if (isTreeBucket(bucket)) Object.assign(out, settleBucket(bucket, dialogue, given));
  else {
    for (const target of targets.filter((t) => t in given)) {
      const index = target === DIALOGUE_TARGET ? null : Number(target);
      const kept = sanitizeValue(bucket, given[target], turnContext(dialogue, index, bucket, given));
      if (kept !== undefined) out[target] = kept;
    }
  }
  const texts = sanitizeExplanations(bucket, explanations, targets);
  if (texts) out[EXPLANATION_KEY] = texts;
  return out;
}

describe('shared require table', () => {
  it('has the cases', () => {
    expect(table.cases.length).toBeGreaterThanOrEqual(40);
  });

  it.each(table.cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
    const bucket = publicBucket(c);
    const dialogue = dialogueOf(c);
    const missing = bucketMissing(bucket, dialogue, c.answers);
    const turns = [...new Set(missing.map((m) => m.turn))].sort((a, b) => (a ?? -1) - (b ?? -1));
    expect({ complete: missing.length === 0, missing: turns }).toEqual(c.expected);
    const kept = pageKeeps(bucket, dialogue, c.answers);
    if (c.valid ?? true) expect(kept).toEqual(c.answers);
    else expect(kept).not.toEqual(c.answers);
  });
});
