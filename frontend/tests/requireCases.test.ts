/**
 * The shared require table (tests/shared/require_cases.json at the repository root) against the
 * page's check; the server runs the same table (tests/test_require_cases.py).
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { settleBucket, turnContext } from '../src/context';
import { bucketMissing } from '../src/require';
import type { Bucket, BucketValue, Dialogue } from '../src/types';
import { DIALOGUE_TARGET } from '../src/types';
import { isTreeBucket, sanitizeValue } from '../src/values';

interface Case {
  name: string;
  bucket: string | Record<string, unknown>;
  speakers: string[];
  targets: number[];
  answers: Record<string, BucketValue>;
  valid?: boolean;
  expected: { complete: boolean; missing: Array<number | null> };
}

const table = JSON.parse(
  readFileSync(resolve(__dirname, '../../tests/shared/require_cases.json'), 'utf-8'),
) as { buckets: Record<string, Record<string, unknown>>; cases: Case[] };

const DIALOGUE_CONFIGS = new Set(['likert-5-dialogue', 'foreach-5-select-dialogue', 'comparative']);

/** The bucket as the server sends it (GET /api/units: level, require, targets per dialogue). */
function publicBucket(c: Case): Bucket {
  const spec = typeof c.bucket === 'string' ? table.buckets[c.bucket] : c.bucket;
  const level = DIALOGUE_CONFIGS.has(spec.config as string) ? 'dialogue' : 'turn';
  return {
    config: spec.config,
    level,
    question: spec.question ?? null,
    options: spec.options,
    require: spec.require ?? null,
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

/** What the page keeps of the values: trees settled turn by turn, other values sanitized. */
function pageKeeps(bucket: Bucket, dialogue: Dialogue, values: Record<string, BucketValue>) {
  if (isTreeBucket(bucket)) return settleBucket(bucket, dialogue, values);
  const out: Record<string, unknown> = {};
  for (const [target, value] of Object.entries(values)) {
    const index = target === DIALOGUE_TARGET ? null : Number(target);
    const kept = sanitizeValue(bucket, value, turnContext(dialogue, index, bucket, values));
    if (kept !== undefined) out[target] = kept;
  }
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
