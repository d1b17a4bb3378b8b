import { describe, expect, it } from 'vitest';
import { escapeHtml, humanize, makeShow, makeShowHtml, questionLabel, speakerLabel } from '../src/display';

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

  it('names speakers: system is SPEAKER_X, user is SPEAKER_Y', () => {
    expect(speakerLabel('system', { SPEAKER_X: 'Alice', SPEAKER_Y: 'You' })).toBe('Alice');
    expect(speakerLabel('user', { SPEAKER_X: 'Alice', SPEAKER_Y: 'You' })).toBe('You');
    expect(speakerLabel('system', {})).toBe('Bot');
  });
});
