import { describe, expect, it } from 'vitest';
import { makeSampleUnit } from '../dev/sampleUnit';
import { answersForSubmit, buildSteps, sanitizeAnswers } from '../src/answers';
import { showFor, speakerNames } from '../src/display';
import { bucketMissing, formatMissing, stepMissing } from '../src/require';
import type { Answers, Bucket, Dialogue } from '../src/types';
import { isValueComplete, valueGaps } from '../src/values';

const unit = makeSampleUnit();
const show = showFor(speakerNames(unit.speaker_names), null);
const d1 = unit.dialogues[0];
const d2 = unit.dialogues[1];

function missing(bucketName: string, answers: Answers, dialogue: Dialogue = d1) {
  return stepMissing(unit, dialogue.key, bucketName, answers, show).map(formatMissing);
}

function withBucket(bucketName: string, values: Record<string, unknown>, dialogue: Dialogue = d1): Answers {
  return { [dialogue.key]: { [bucketName]: values as never } };
}

describe('require: button_flow family (trees)', () => {
  const Q1 = "Is SPEAKER_X's response relevant to what SPEAKER_Y said?";
  const Q2 = 'Does the response ask SPEAKER_Y a question?';
  const ok = { [Q1]: { 'Yes, it follows on naturally.': {} }, [Q2]: { 'No.': {} } };

  it('turn level: every target turn needs every shown radio question', () => {
    expect(missing('relevance', {})).toEqual([
      "Turn 2: answer 'Is Bot's response relevant to what Partner said?'",
      "Turn 2: answer 'Does the response ask Partner a question?'",
      "Turn 4: answer 'Is Bot's response relevant to what Partner said?'",
      "Turn 4: answer 'Does the response ask Partner a question?'",
      "Turn 6: answer 'Is Bot's response relevant to what Partner said?'",
      "Turn 6: answer 'Does the response ask Partner a question?'",
    ]);
    expect(missing('relevance', withBucket('relevance', { '1': ok, '3': ok, '5': ok }))).toEqual([]);
  });

  it('nested radio questions under a chosen answer count', () => {
    const partial = { [Q1]: { 'No, it is off the point.': {} }, [Q2]: { 'No.': {} } };
    expect(missing('relevance', withBucket('relevance', { '1': partial, '3': ok, '5': ok }))).toEqual([
      "Turn 2: answer 'What is wrong with it?'",
    ]);
  });

  it('checkbox questions need an entry ({} = none); an unopened checkbox-only turn is missing', () => {
    const b: Bucket = { ...unit.buckets.flags, require: { level: 'turn' } };
    expect(bucketMissing(b, d1, {}, show).map(formatMissing)).toEqual([
      'Turn 2: open this turn and review it',
      'Turn 4: open this turn and review it',
      'Turn 6: open this turn and review it',
    ]);
    const seen = { rude_q: {}, repeat_q: {} };
    expect(bucketMissing(b, d1, { '1': seen, '3': seen, '5': { rude_q: { 'This response is rude.': {} }, repeat_q: {} } }, show)).toEqual([]);
  });

  it('_dep_: a hidden question does not count, a shown one does', () => {
    const base = { 'Does the response use facts?': {}, 'Does the response contain a question?': { 'No.': {} } };
    expect(missing('facts', withBucket('facts', { '1': base, '3': base }))).toEqual([]);
    const asks = { 'Does the response use facts?': {}, 'Does the response contain a question?': { 'Yes.': {} } };
    expect(missing('facts', withBucket('facts', { '1': asks, '3': base }))).toEqual([
      "Turn 2: answer 'Is the question easy to answer?'",
    ]);
  });

  it('no require: nothing is missing', () => {
    expect(missing('flags', {})).toEqual([]);
  });
});

describe('require: multiselect', () => {
  const b: Bucket = { ...unit.buckets.labels, require: { level: 'turn' } };
  it('a list (even empty) is complete; a missing value is not', () => {
    expect(isValueComplete(b, [], { speaker: 'user' })).toBe(true);
    expect(isValueComplete(b, ['greets'], { speaker: 'user' })).toBe(true);
    expect(isValueComplete(b, undefined, { speaker: 'user' })).toBe(false);
    expect(bucketMissing(b, d1, { '0': [], '1': [], '2': ['greets'] }, show).map(formatMissing)).toEqual([
      'Turn 4: open this turn and review it',
    ]);
  });
});

describe('require: likert and foreach', () => {
  it('likert-5-turn: a 1–5 integer for every option label on every target turn', () => {
    expect(missing('fluency_turn', withBucket('fluency_turn', { '1': { Fluent: 4 } }))).toEqual([
      "Turn 4: rate 'How fluent is this response?'",
    ]);
    expect(missing('fluency_turn', withBucket('fluency_turn', { '1': { Fluent: 4 }, '3': { Fluent: 6 } }))).toEqual([
      "Turn 4: rate 'How fluent is this response?'",
    ]);
    expect(missing('fluency_turn', withBucket('fluency_turn', { '1': { Fluent: 4 }, '3': { Fluent: 1 } }))).toEqual([]);
  });

  it('likert-5-dialogue: every option of the "dialogue" value', () => {
    expect(missing('overall', withBucket('overall', { dialogue: { Engaging: 2 } }))).toEqual([
      "Rate 'How good was the conversation overall?'",
    ]);
    expect(missing('overall', withBucket('overall', { dialogue: { Engaging: 2, Quality: 5 } }))).toEqual([]);
  });

  it('foreach-5-select with require dialogue: at least one complete target turn', () => {
    expect(missing('aspects', {})).toEqual(['Answer at least one of turns 2, 6 completely']);
    expect(missing('aspects', withBucket('aspects', { '1': { clear: 3 } }))).toEqual([
      'Answer at least one of turns 2, 6 completely',
    ]);
    expect(missing('aspects', withBucket('aspects', { '5': { clear: 3, kind: 5 } }))).toEqual([]);
  });

  it('foreach-5-select-dialogue: a rating for every option value', () => {
    const b: Bucket = { ...unit.buckets.dialogue_aspects, require: { level: 'dialogue' } };
    expect(bucketMissing(b, d1, { dialogue: { coherent: 5 } }, show).map(formatMissing)).toEqual(["Rate 'Friendly'"]);
    expect(bucketMissing(b, d1, { dialogue: { coherent: 5, friendly: 1 } }, show)).toEqual([]);
    expect(valueGaps(b, { coherent: 5, friendly: 2.5 }, { speaker: null })).toHaveLength(1);
  });
});

describe('require: comparative', () => {
  it('needs exactly one of the options', () => {
    expect(missing('which_better', {}, d2)).toEqual(["Answer 'In which conversation was Bot more helpful?'"]);
    expect(missing('which_better', withBucket('which_better', { dialogue: 'Maybe' }, d2), d2)).toHaveLength(1);
    expect(missing('which_better', withBucket('which_better', { dialogue: 'No difference' }, d2), d2)).toEqual([]);
  });
});

describe('steps and answers', () => {
  it('one step per dialogue × annotation task, in order', () => {
    expect(buildSteps(unit).map((s) => `${s.dialogueKey}/${s.bucketName}`)).toEqual([
      'd_one/relevance',
      'd_one/facts',
      'd_one/flags',
      'd_one/labels',
      'd_one/fluency_turn',
      'd_one/aspects',
      'd_one/overall',
      'd_one/dialogue_aspects',
      'd_two/which_better',
    ]);
  });

  it('sanitizes a restored draft to what the unit offers', () => {
    const raw = {
      d_one: {
        labels: { '0': ['greets', 'asks', 'nope'], '9': ['greets'] },
        fluency_turn: { '1': { Fluent: 3, Other: 2 }, '3': 'bad' },
        unknown_bucket: { '1': [] },
        which_better: { dialogue: 'No difference' },
      },
      d_unknown: { labels: { '0': [] } },
      d_two: { which_better: { dialogue: 'The right one' } },
    };
    expect(sanitizeAnswers(unit, raw)).toEqual({
      d_one: { labels: { '0': ['greets'] }, fluency_turn: { '1': { Fluent: 3 } } },
      d_two: { which_better: { dialogue: 'The right one' } },
    });
  });

  it('submits without empty values but keeps [] (none apply)', () => {
    const answers: Answers = {
      d_one: { relevance: { '1': {} }, labels: { '0': [] }, overall: { dialogue: {} } },
      d_two: { which_better: {} },
    };
    expect(answersForSubmit(answers)).toEqual({ d_one: { labels: { '0': [] } } });
  });
});
