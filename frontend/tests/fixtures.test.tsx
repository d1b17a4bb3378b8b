/**
 * Every bucket of the original project's annotation_buckets.json (a shared test fixture; skipped
 * when absent) is rendered with a dialogue of our own, answered through the UI, and checked
 * against the answer format and the require rules.
 */
import { act, fireEvent, screen, within } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { showFor, speakerNames } from '../src/display';
import { bucketMissing } from '../src/require';
import { answersOf, isPlainObject, questionsOf } from '../src/tree';
import type { Bucket, Unit } from '../src/types';
import { comparativeOptions, foreachOptions, likertOptions } from '../src/values';
import { FIXTURE_DIALOGUE, fixtureAvailable, loadFixtureBuckets } from './fixtureBuckets';
import { renderStep } from './harness';

const buckets = loadFixtureBuckets();
const names = Object.keys(buckets);

function unitFor(name: string): Unit {
  return {
    unit_id: 'u_fx',
    status: 'assigned',
    task: { title: 'Fixture', description_html: '' },
    speaker_names: { system: 'Bot', user: 'Human' },
    seconds_remaining: null,
    dialogues: [{ ...FIXTURE_DIALOGUE, annotation_tasks: [name] }],
    buckets: { [name]: buckets[name] },
    draft: null,
    completion_code: null,
  };
}

/** Answer everything visible: first radio of every unanswered radio group, every 3rd scale point. */
function answerAll(root: HTMLElement) {
  for (let round = 0; round < 20; round++) {
    let clicked = false;
    // open collapsed turns
    for (const b of within(root).queryAllByRole('button', { name: /^(Answer|Change) turn \d+$/ })) {
      act(() => fireEvent.click(b));
      clicked = true;
    }
    const radios = Array.from(root.querySelectorAll<HTMLInputElement>('input[type=radio]'));
    const groups = new Map<string, HTMLInputElement[]>();
    for (const r of radios) groups.set(r.name, [...(groups.get(r.name) ?? []), r]);
    for (const group of groups.values()) {
      if (group.some((r) => r.checked)) continue;
      const pick = group.length === 5 && group[0].value === '1' ? group[2] : group[0];
      act(() => fireEvent.click(pick));
      clicked = true;
      break;
    }
    if (!clicked) return;
  }
}

/** The value only uses questions/answers of the spec, one answer per radio question. */
function fitsTree(spec: unknown, value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  const questions = new Map(questionsOf(spec));
  for (const [q, chosen] of Object.entries(value)) {
    const qs = questions.get(q);
    if (!qs || !isPlainObject(chosen)) return false;
    const answers = new Map(answersOf(qs));
    const checkbox = isPlainObject(qs._type_) && 'checkbox' in qs._type_;
    if (!checkbox && Object.keys(chosen).length !== 1) return false;
    for (const [a, sub] of Object.entries(chosen)) {
      if (!answers.has(a) || !fitsTree(answers.get(a), sub)) return false;
    }
  }
  return true;
}

function checkShape(bucket: Bucket, value: unknown) {
  switch (bucket.config) {
    case 'button_flow':
    case 'nondetails_button_flow':
    case 'nondetails_nonhelp_button_flow':
      expect(fitsTree(bucket.options, value)).toBe(true);
      break;
    case 'multiselect':
      expect(Array.isArray(value)).toBe(true);
      break;
    case 'likert-5-turn':
    case 'likert-5-dialogue':
      expect(Object.keys(value as object).sort()).toEqual(likertOptions(bucket).map((o) => o.label).sort());
      expect(Object.values(value as object).every((n) => n === 3)).toBe(true);
      break;
    case 'foreach-5-select':
    case 'foreach-5-select-dialogue':
      expect(Object.keys(value as object)).toEqual(foreachOptions(bucket).map((o) => o.value));
      break;
    case 'comparative':
      expect(comparativeOptions(bucket)).toContain(value);
      break;
  }
}

describe.skipIf(!fixtureAvailable)('fixture buckets (annotation_buckets.json)', () => {
  it('has all nine configs', () => {
    expect(new Set(names.map((n) => buckets[n].config)).size).toBe(9);
  });

  it.each(names)('%s renders, is accessible and produces a complete, well-formed answer', (name) => {
    const bucket = buckets[name];
    const unit = unitFor(name);
    const r = renderStep(unit, { dialogueKey: FIXTURE_DIALOGUE.key, bucketName: name });
    const root = r.container;

    // Accessible names everywhere; no raw placeholders on screen.
    for (const input of root.querySelectorAll('input')) {
      expect(input.closest('label')?.textContent?.trim()).toBeTruthy();
    }
    for (const fs of root.querySelectorAll('fieldset')) {
      expect(fs.querySelector(':scope > legend')?.textContent?.trim()).toBeTruthy();
    }
    expect(root.textContent).not.toMatch(/SPEAKER_[XY]/);

    answerAll(root);

    const strict: Bucket = { ...bucket, require: { level: 'turn' } };
    const values = r.bucketAnswers() ?? {};
    expect(bucketMissing(strict, unit.dialogues[0], values, showFor(speakerNames(unit.speaker_names), null))).toEqual([]);
    const targets = bucket.level === 'dialogue' ? ['dialogue'] : ['1', '3'];
    expect(Object.keys(values).sort()).toEqual(targets.sort());
    for (const t of targets) checkShape(bucket, values[t]);

    if (bucket.level === 'turn') {
      expect(screen.getAllByRole('group', { name: /^Turn [24]$/ }).map((g) => g.dataset.turnIndex)).toEqual(['1', '3']);
    }
  });
});
