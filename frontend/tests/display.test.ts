import { describe, expect, it } from 'vitest';
import {
  escapeHtml,
  humanize,
  makeShow,
  makeShowHtml,
  placeholderNames,
  questionLabel,
  showFor,
  speakerLabel,
  speakerNames, bucketTitle } from '../src/display';

describe('display helpers', () => {
  it('replaces SPEAKER_X / SPEAKER_Y with the speaker names', () => {
    const show = makeShow({ SPEAKER_X: 'Bot', SPEAKER_Y: 'User' });
    expect(show("Does SPEAKER_X acknowledge SPEAKER_Y? SPEAKER_X's turn")).toBe("Does Bot acknowledge User? Bot's turn");
  });

  it('is the identity without names', () => {
    expect(makeShow({})('SPEAKER_X')).toBe('SPEAKER_X');
    expect(makeShow(null)('SPEAKER_X')).toBe('SPEAKER_X');
  });

  it('escapes names substituted into trusted HTML', () => {
    const show = makeShowHtml({ SPEAKER_X: '<b>Bot</b>' });
    expect(show('<p>SPEAKER_X</p>')).toBe('<p>&lt;b&gt;Bot&lt;/b&gt;</p>');
    expect(escapeHtml(`<"'&>`)).toBe('&lt;&quot;&#39;&amp;&gt;');
  });

  it('humanises identifier question keys only', () => {
    const show = makeShow({ SPEAKER_X: 'Bot' });
    expect(questionLabel('grammar_q', show)).toBe('Grammar');
    expect(questionLabel('personal_value_q', show)).toBe('Personal value');
    expect(questionLabel('Is SPEAKER_X rude?', show)).toBe('Is Bot rude?');
    expect(humanize('consistency_label')).toBe('Consistency label');
  });

  it('names speakers per speaker, reading legacy placeholder keys too', () => {
    const names = speakerNames({ system: 'Alice', user: 'You' });
    expect(speakerLabel('system', names)).toBe('Alice');
    expect(speakerLabel('user', names)).toBe('You');
    expect(speakerNames({ SPEAKER_X: 'Robo', SPEAKER_Y: 'Human' })).toEqual({ system: 'Robo', user: 'Human' });
    expect(speakerNames(null)).toEqual({ system: 'Bot', user: 'User' });
    expect(speakerNames({ user: '  ' })).toEqual({ system: 'Bot', user: 'User' });
  });

  it('SPEAKER_X is the speaker of the annotated turn, SPEAKER_Y the other one', () => {
    const names = speakerNames({ system: 'Bot', user: 'Human' });
    const q = 'Does SPEAKER_X answer SPEAKER_Y?';
    expect(showFor(names, 'system')(q)).toBe('Does Bot answer Human?');
    expect(showFor(names, 'user')(q)).toBe('Does Human answer Bot?');
    // texts about the whole dialogue read X as the bot
    expect(showFor(names, null)(q)).toBe('Does Bot answer Human?');
    expect(placeholderNames(names, 'user')).toEqual({ SPEAKER_X: 'Human', SPEAKER_Y: 'Bot' });
  });
});

describe('bucketTitle', () => {
  it('says what a bucket is about, without the words that name its kind', () => {
    expect(bucketTitle('grammatical_likert_turn')).toBe('Grammatical');
    expect(bucketTitle('consistency_label')).toBe('Consistency');
    expect(bucketTitle('relevant_comparative')).toBe('Relevant');
    expect(bucketTitle('overall_quality')).toBe('Overall quality');
    expect(bucketTitle('turn_quality')).toBe('Turn quality');
    expect(bucketTitle('likert')).toBe('Likert');
  });
});
