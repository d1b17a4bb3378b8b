import { describe, expect, it } from 'vitest';
import { chooseRadio, normalizeTree, toggleCheckbox, treeGaps } from '../src/tree';

const turn = { speaker: 'system' };

const spec = {
  'Relevant?': {
    'Yes.': {},
    'No.': {
      'Why?': { 'Topic change.': {}, 'Ignores partner.': {} },
      'Flags?': { _type_: { checkbox: {} }, 'Rude.': {}, 'Long.': {} },
    },
  },
  'Facts?': {
    _type_: { checkbox: {} },
    'Has a fact.': { 'Correct?': { 'Yes.': {}, 'No.': {} } },
  },
  'Question?': { 'Yes.': {}, 'No.': {} },
  'Easy?': {
    _dep_: { answered: { question: 'Question?', answer: 'Yes.' } },
    'Yes.': {},
    'No.': {},
  },
  'Bot only?': { _dep_: { speaker: 'system' }, 'Yes.': {}, 'No.': {} },
};

describe('question trees', () => {
  it('an opened tree holds {} for every shown checkbox question', () => {
    expect(normalizeTree(spec, {}, turn)).toEqual({ 'Facts?': {} });
  });

  it('choosing a radio answer stores exactly {question: {answer: {}}} plus nested checkbox entries', () => {
    let v = normalizeTree(spec, {}, turn);
    v = chooseRadio(spec, v, [], 'Relevant?', 'No.', turn);
    expect(v).toEqual({ 'Relevant?': { 'No.': { 'Flags?': {} } }, 'Facts?': {} });
    v = chooseRadio(spec, v, [['Relevant?', 'No.']], 'Why?', 'Topic change.', turn);
    v = toggleCheckbox(spec, v, [['Relevant?', 'No.']], 'Flags?', 'Rude.', true, turn);
    expect(v['Relevant?']).toEqual({ 'No.': { 'Why?': { 'Topic change.': {} }, 'Flags?': { 'Rude.': {} } } });
  });

  it('changing a radio answer clears the answers nested below the deselected option', () => {
    let v = chooseRadio(spec, {}, [], 'Relevant?', 'No.', turn);
    v = chooseRadio(spec, v, [['Relevant?', 'No.']], 'Why?', 'Topic change.', turn);
    v = chooseRadio(spec, v, [], 'Relevant?', 'Yes.', turn);
    expect(v['Relevant?']).toEqual({ 'Yes.': {} });
    // and choosing "No." again starts from an empty subtree
    v = chooseRadio(spec, v, [], 'Relevant?', 'No.', turn);
    expect(v['Relevant?']).toEqual({ 'No.': { 'Flags?': {} } });
  });

  it('re-choosing the same radio answer keeps its nested answers', () => {
    let v = chooseRadio(spec, {}, [], 'Relevant?', 'No.', turn);
    v = chooseRadio(spec, v, [['Relevant?', 'No.']], 'Why?', 'Topic change.', turn);
    v = chooseRadio(spec, v, [], 'Relevant?', 'No.', turn);
    expect(v['Relevant?']['No.']['Why?']).toEqual({ 'Topic change.': {} });
  });

  it('unchecking a checkbox answer removes it and its subtree', () => {
    let v = toggleCheckbox(spec, {}, [], 'Facts?', 'Has a fact.', true, turn);
    v = chooseRadio(spec, v, [['Facts?', 'Has a fact.']], 'Correct?', 'No.', turn);
    expect(v['Facts?']).toEqual({ 'Has a fact.': { 'Correct?': { 'No.': {} } } });
    v = toggleCheckbox(spec, v, [], 'Facts?', 'Has a fact.', false, turn);
    expect(v['Facts?']).toEqual({});
  });

  it('_dep_: a dependent question is shown only when its condition holds and pruned when hidden', () => {
    let v = chooseRadio(spec, {}, [], 'Question?', 'Yes.', turn);
    expect(treeGaps(spec, v, turn).map((g) => g.question)).toContain('Easy?');
    v = chooseRadio(spec, v, [], 'Easy?', 'No.', turn);
    expect(v['Easy?']).toEqual({ 'No.': {} });
    v = chooseRadio(spec, v, [], 'Question?', 'No.', turn);
    expect(v).not.toHaveProperty('Easy?');
    expect(treeGaps(spec, v, turn).map((g) => g.question)).not.toContain('Easy?');
  });

  it('_dep_ speaker: the question counts only for turns of that speaker', () => {
    const gapsSystem = treeGaps(spec, {}, { speaker: 'system' }).map((g) => g.question);
    const gapsUser = treeGaps(spec, {}, { speaker: 'user' }).map((g) => g.question);
    expect(gapsSystem).toContain('Bot only?');
    expect(gapsUser).not.toContain('Bot only?');
    expect(normalizeTree(spec, { 'Bot only?': { 'Yes.': {} } }, { speaker: 'user' })).not.toHaveProperty('Bot only?');
  });

  it('normalize drops unknown questions/answers and extra radio answers', () => {
    const raw = {
      'Relevant?': { 'Yes.': {}, 'No.': {} },
      'Unknown?': { 'x': {} },
      'Question?': { 'Maybe.': {} },
    };
    expect(normalizeTree(spec, raw, turn)).toEqual({ 'Relevant?': { 'Yes.': {} }, 'Facts?': {} });
  });

  it('gaps: shown radio questions need an answer, checkbox questions an entry', () => {
    expect(treeGaps(spec, undefined, turn)).toEqual([
      { question: 'Relevant?', kind: 'radio' },
      { question: 'Facts?', kind: 'checkbox' },
      { question: 'Question?', kind: 'radio' },
      { question: 'Bot only?', kind: 'radio' },
    ]);
    let v = normalizeTree(spec, {}, turn);
    v = chooseRadio(spec, v, [], 'Relevant?', 'No.', turn);
    v = chooseRadio(spec, v, [], 'Question?', 'No.', turn);
    v = chooseRadio(spec, v, [], 'Bot only?', 'No.', turn);
    expect(treeGaps(spec, v, turn)).toEqual([{ question: 'Why?', kind: 'radio' }]);
    v = chooseRadio(spec, v, [['Relevant?', 'No.']], 'Why?', 'Topic change.', turn);
    expect(treeGaps(spec, v, turn)).toEqual([]);
  });

  it('never mutates its input', () => {
    const v = Object.freeze({ 'Relevant?': Object.freeze({ 'Yes.': Object.freeze({}) }) });
    const before = JSON.stringify(v);
    chooseRadio(spec, v as never, [], 'Relevant?', 'No.', turn);
    toggleCheckbox(spec, v as never, [], 'Facts?', 'Has a fact.', true, turn);
    expect(JSON.stringify(v)).toBe(before);
  });
});
