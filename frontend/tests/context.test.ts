import { describe, expect, it } from 'vitest';
import { settleBucket, settleStep, turnContext } from '../src/context';
import type { Answers, Bucket, Dialogue } from '../src/types';

const ASK = 'Does SPEAKER_X ask a question?';
const bucket: Bucket = {
  config: 'nondetails_button_flow',
  level: 'turn',
  options: {
    [ASK]: { _dep_: { boolPrevTurnExpect: { any_of: [[ASK, 'Yes']] } }, 'Yes, it asks.': {}, 'No.': {} },
    Tones: { _dep_: { boolPrevTurnExpect: { any_of: [[ASK, 'Yes']] } }, _type_: { checkbox: {} }, 'Kind.': {} },
  },
  require: { level: 'turn' },
  targets: { d: [5, 1, 3] },
};
const dialogue: Dialogue = {
  key: 'd',
  turns: ['user', 'system', 'user', 'system', 'user', 'system'].map((speaker, index) => ({ index, speaker, text: '' })),
  turns2: null,
  persona: null,
  annotation_tasks: ['b'],
};
const yes = { [ASK]: { 'Yes, it asks.': {} }, Tones: {} };
const no = { [ASK]: { 'No.': {} }, Tones: {} };

describe('turn context', () => {
  it('carries the turn, the sorted targets and the values; null index for the dialogue value', () => {
    expect(turnContext(dialogue, 3, bucket, { '1': yes })).toEqual({
      speaker: 'system',
      index: 3,
      targets: [1, 3, 5],
      values: { '1': yes },
    });
    expect(turnContext(dialogue, null, bucket, undefined).index).toBeNull();
  });
});

describe('settling later turns after a change', () => {
  it('keeps the same object when nothing is hidden', () => {
    const values = { '1': yes, '3': yes, '5': no };
    expect(settleBucket(bucket, dialogue, values)).toBe(values);
  });

  it('drops answers an earlier change hid, in order (a chain), adding nothing', () => {
    const settled = settleBucket(bucket, dialogue, { '1': no, '3': yes, '5': no });
    expect(settled).toEqual({ '1': no, '3': {}, '5': {} });
  });

  it('settleStep returns the answers object itself when unchanged', () => {
    const answers: Answers = { d: { b: { '1': yes, '3': no } } };
    expect(settleStep(answers, bucket, dialogue, 'b')).toBe(answers);
    const changed = settleStep({ d: { b: { '1': no, '3': no } } }, bucket, dialogue, 'b');
    expect(changed).toEqual({ d: { b: { '1': no, '3': {} } } });
  });
});
