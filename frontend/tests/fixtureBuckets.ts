/**
 * Loads the original project's annotation_buckets.json (shared test fixture, outside the product)
 * and turns its buckets into API-shaped buckets. Tests using it are skipped when it is absent.
 */
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Bucket, BucketConfig, Dialogue } from '../src/types';

// tests/ -> frontend/ -> repository -> the shared fixtures next to it
const FIXTURE = resolve(__dirname, '../../../shared/fixtures/cep/task_config/annotation_buckets.json');

export const fixtureAvailable = existsSync(FIXTURE);

const DIALOGUE_LEVEL = new Set(['likert-5-dialogue', 'foreach-5-select-dialogue', 'comparative']);

/** A small dialogue of our own to annotate with the fixture buckets. */
export const FIXTURE_DIALOGUE: Dialogue = {
  key: 'd_fixture',
  turns: [
    { index: 0, speaker: 'user', text: 'Good morning.' },
    { index: 1, speaker: 'system', text: 'Morning! Did you sleep well?' },
    { index: 2, speaker: 'user', text: 'Not really, the neighbours were loud.' },
    { index: 3, speaker: 'system', text: 'Sorry to hear that. Noise can be tiring.' },
  ],
  turns2: [
    { index: 0, speaker: 'user', text: 'Good morning.' },
    { index: 1, speaker: 'system', text: 'Hello.' },
  ],
  persona: null,
  annotation_tasks: [],
};

export function loadFixtureBuckets(): Record<string, Bucket> {
  if (!fixtureAvailable) return {};
  const raw = JSON.parse(readFileSync(FIXTURE, 'utf8')).config as Record<string, Record<string, unknown>>;
  const out: Record<string, Bucket> = {};
  for (const [name, b] of Object.entries(raw)) {
    const dialogueLevel = DIALOGUE_LEVEL.has(b.config as string);
    out[name] = {
      config: b.config as BucketConfig,
      level: dialogueLevel ? 'dialogue' : 'turn',
      question: (b.question as string) ?? null,
      task_title: (b.task_title as string) ?? name,
      options: b.options,
      label_details: (b.label_details as Record<string, string>) ?? null,
      require: (b.require as Bucket['require']) ?? null,
      instructions_html: `<p>Instructions for ${name}.</p>`,
      targets: dialogueLevel ? {} : { [FIXTURE_DIALOGUE.key]: [1, 3] },
    };
  }
  return out;
}
