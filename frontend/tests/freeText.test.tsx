/** Text buckets and "Explain your answer": what the worker types is stored as given. */
import { screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it } from 'vitest';
import { makeSampleUnit } from '../dev/sampleUnit';
import { stepMissing } from '../src/require';
import type { Bucket, Unit } from '../src/types';
import { renderStep } from './harness';

const limits = (min: number, max = 2000, multiline = true) => ({ min_chars: min, max_chars: max, multiline });

function unitWith(extra: Record<string, Bucket>, tasks: Record<string, string[]>): Unit {
  const unit = makeSampleUnit();
  return {
    ...unit,
    buckets: { ...unit.buckets, ...extra },
    dialogues: unit.dialogues.map((d) => ({ ...d, annotation_tasks: tasks[d.key] ?? d.annotation_tasks })),
  };
}

const feedback: Bucket = {
  config: 'text',
  level: 'dialogue',
  question: 'What did SPEAKER_X do well?',
  options: null,
  require: { level: 'dialogue' },
  text: limits(10, 60),
  targets: {},
};
const why: Bucket = {
  config: 'text',
  level: 'turn',
  question: 'Why did SPEAKER_X say this?',
  options: null,
  text: limits(0, 100, false),
  targets: { d_one: [1, 3] },
};

describe('text buckets', () => {
  it('a dialogue-level text: required, counted, stored as typed', async () => {
    const user = userEvent.setup();
    const unit = unitWith({ feedback }, { d_one: ['feedback'] });
    const step = { dialogueKey: 'd_one', bucketName: 'feedback' };
    const r = renderStep(unit, step);
    const box = screen.getByRole('textbox', { name: 'What did Bot do well?' });
    expect(box.tagName).toBe('TEXTAREA');
    expect(box).toHaveAttribute('maxLength', '60');
    await user.type(box, '  Short ');
    expect(r.value('dialogue')).toBe('  Short ');
    expect(screen.getByText('5 / 60 characters (at least 10)')).toBeInTheDocument();
    expect(stepMissing(unit, 'd_one', 'feedback', r.answers()).map((m) => m.message)).toEqual([
      "answer 'What did SPEAKER_X do well?' in at least 10 characters",
    ]);
    await user.type(box, 'but kind.{Enter}Yes');
    expect(r.value('dialogue')).toBe('  Short but kind.\nYes');
    expect(stepMissing(unit, 'd_one', 'feedback', r.answers())).toEqual([]);
    await user.clear(box);
    expect(r.bucketAnswers()).toEqual({});
  });

  it('a turn-level text is a one-line box under each target turn', async () => {
    const user = userEvent.setup();
    const unit = unitWith({ why }, { d_one: ['why'] });
    const r = renderStep(unit, { dialogueKey: 'd_one', bucketName: 'why' });
    const box = within(screen.getByRole('group', { name: 'Turn 4' })).getByRole('textbox', { name: 'Why did Bot say this?' });
    expect(box.tagName).toBe('INPUT');
    await user.type(box, 'To ask back.');
    expect(r.bucketAnswers()).toEqual({ '3': 'To ask back.' });
  });
});

describe('explain', () => {
  it('a comparison with a required explanation stores it beside the answer', async () => {
    const user = userEvent.setup();
    const unit = makeSampleUnit();
    unit.buckets.which_better = { ...unit.buckets.which_better, require: { level: 'dialogue' }, explain: limits(5, 200) };
    const step = { dialogueKey: 'd_two', bucketName: 'which_better' };
    const r = renderStep(unit, step);
    await user.click(screen.getByRole('radio', { name: 'The right one' }));
    expect(stepMissing(unit, 'd_two', 'which_better', r.answers()).map((m) => m.message)).toEqual([
      'explain your answer in at least 5 characters',
    ]);
    await user.type(screen.getByRole('textbox', { name: 'Explain your answer' }), 'It answers.');
    expect(r.bucketAnswers()).toEqual({ dialogue: 'The right one', explanation: { dialogue: 'It answers.' } });
    expect(stepMissing(unit, 'd_two', 'which_better', r.answers())).toEqual([]);
  });

  it('an optional explanation per turn of a Likert bucket', async () => {
    const user = userEvent.setup();
    const unit = makeSampleUnit();
    const name = Object.keys(unit.buckets).find((n) => unit.buckets[n].config === 'likert-5-turn')!;
    unit.buckets[name] = { ...unit.buckets[name], explain: limits(0) };
    const target = unit.buckets[name].targets.d_one[0];
    const r = renderStep(unit, { dialogueKey: 'd_one', bucketName: name });
    const turn = screen.getByRole('group', { name: `Turn ${target + 1}` });
    await user.type(within(turn).getByRole('textbox', { name: 'Explain your answer (optional)' }), 'Fine');
    expect(r.bucketAnswers()).toEqual({ explanation: { [String(target)]: 'Fine' } });
  });
});

describe('comparisons on a phone', () => {
  it('stacked dialogues say above/below instead of left/right (the stored option is unchanged)', async () => {
    const user = userEvent.setup();
    const matchMedia = window.matchMedia;
    window.matchMedia = ((query: string) => ({ matches: true, media: query, addEventListener() {}, removeEventListener() {} })) as never;
    try {
      const unit = makeSampleUnit();
      unit.buckets.which_better = { ...unit.buckets.which_better, options: ['Dialogue 1 (left)', 'Dialogue 2 (right)'] };
      const r = renderStep(unit, { dialogueKey: 'd_two', bucketName: 'which_better' });
      await user.click(screen.getByRole('radio', { name: 'Dialogue 2 (below)' }));
      expect(r.value('dialogue')).toBe('Dialogue 2 (right)');
    } finally {
      window.matchMedia = matchMedia;
    }
  });
});
