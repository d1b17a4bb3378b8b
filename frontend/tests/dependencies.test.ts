import { describe, expect, it } from 'vitest';
import {
  answered,
  answerMatches,
  boolPrevTurnExpect,
  DEPENDENCIES,
  dependencyHolds,
  not_answered,
  PREV_TURN_PAIRS,
  speaker,
} from '../src/dependencies';

const sys = { speaker: 'system' };
const usr = { speaker: 'user' };

describe('dependency registry', () => {
  it('has exactly the functions of the contract', () => {
    expect(Object.keys(DEPENDENCIES).sort()).toEqual(['answered', 'boolPrevTurnExpect', 'not_answered', 'speaker']);
  });

  it('answered: a specific answer of a sibling question', () => {
    const siblings = { 'Q?': { 'Yes.': {} } };
    expect(answered({ question: 'Q?', answer: 'Yes.' }, siblings, sys)).toBe(true);
    expect(answered({ question: 'Q?', answer: 'No.' }, siblings, sys)).toBe(false);
    expect(answered({ question: 'Other?', answer: 'Yes.' }, siblings, sys)).toBe(false);
  });

  it('answered without answer: any answer chosen; an empty checkbox entry is no answer', () => {
    expect(answered({ question: 'Q?' }, { 'Q?': { 'No.': {} } }, sys)).toBe(true);
    expect(answered({ question: 'Q?' }, { 'Q?': {} }, sys)).toBe(false);
    expect(answered({ question: 'Q?' }, {}, sys)).toBe(false);
  });

  it('not_answered is the opposite of answered', () => {
    const siblings = { 'Q?': { 'Yes.': {} } };
    expect(not_answered({ question: 'Q?', answer: 'Yes.' }, siblings, sys)).toBe(false);
    expect(not_answered({ question: 'Q?', answer: 'No.' }, siblings, sys)).toBe(true);
    expect(not_answered({ question: 'Q?' }, {}, sys)).toBe(true);
  });

  it('speaker: the annotated turn is spoken by the given speaker', () => {
    expect(speaker('system', {}, sys)).toBe(true);
    expect(speaker('system', {}, usr)).toBe(false);
    expect(speaker('user', {}, usr)).toBe(true);
  });

  it('dependencyHolds: no _dep_ holds; every named function must hold', () => {
    expect(dependencyHolds(undefined, {}, sys)).toBe(true);
    expect(dependencyHolds({ speaker: 'system' }, {}, sys)).toBe(true);
    expect(dependencyHolds({ speaker: 'user' }, {}, sys)).toBe(false);
    expect(
      dependencyHolds({ speaker: 'system', answered: { question: 'Q?', answer: 'Yes.' } }, { 'Q?': { 'Yes.': {} } }, sys),
    ).toBe(true);
    expect(
      dependencyHolds({ speaker: 'system', answered: { question: 'Q?', answer: 'Yes.' } }, { 'Q?': { 'No.': {} } }, sys),
    ).toBe(false);
  });

  it('an unknown function name does not hide the question', () => {
    const warn = console.warn;
    console.warn = () => {};
    try {
      expect(dependencyHolds({ nope: 1 }, {}, sys)).toBe(true);
    } finally {
      console.warn = warn;
    }
  });

  it('answerMatches: the whole answer or its first words, never part of a word', () => {
    expect(answerMatches('No', 'No')).toBe(true);
    expect(answerMatches('No, SPEAKER_X ignored SPEAKER_Y.', 'No')).toBe(true);
    expect(answerMatches('No.', 'No')).toBe(true);
    expect(answerMatches('Not applicable.', 'No')).toBe(false);
    expect(answerMatches('Nobody', 'No')).toBe(false);
    expect(answerMatches('no, lower case', 'No')).toBe(false);
  });

  describe('boolPrevTurnExpect', () => {
    const [prompt, yes] = PREV_TURN_PAIRS[1];
    const ctx = (index: number | null, values: Record<string, unknown>) => ({
      speaker: 'system',
      index,
      targets: [1, 3, 5],
      values,
    });

    it('holds on the first target turn and for a dialogue-level value', () => {
      expect(boolPrevTurnExpect({}, {}, ctx(1, {}))).toBe(true);
      expect(boolPrevTurnExpect({}, {}, ctx(null, {}))).toBe(true);
      expect(boolPrevTurnExpect({}, {}, { speaker: 'system' })).toBe(true);
    });

    it('looks at the previous target turn (two turns back with odd indices), at any depth', () => {
      const prompted = { [prompt]: { [`${yes}, SPEAKER_X asked.`]: {} } };
      expect(boolPrevTurnExpect({}, {}, ctx(3, { '1': prompted }))).toBe(true);
      expect(boolPrevTurnExpect({}, {}, ctx(3, { '2': prompted }))).toBe(false);
      expect(boolPrevTurnExpect({}, {}, ctx(5, { '1': prompted }))).toBe(false);
      expect(boolPrevTurnExpect({}, {}, ctx(3, { '1': { Outer: { 'A.': prompted } } }))).toBe(true);
      expect(boolPrevTurnExpect({}, {}, ctx(3, { '1': { [prompt]: { 'No.': {} } } }))).toBe(false);
    });

    it('any_of replaces the default pairs; checkbox answers match by membership', () => {
      const args = { any_of: [['Tones?', 'Rude.']] };
      expect(boolPrevTurnExpect(args, {}, ctx(3, { '1': { 'Tones?': { 'Kind.': {}, 'Rude.': {} } } }))).toBe(true);
      expect(boolPrevTurnExpect(args, {}, ctx(3, { '1': { 'Tones?': {} } }))).toBe(false);
      expect(boolPrevTurnExpect(args, {}, ctx(3, { '1': { [prompt]: { 'Yes.': {} } } }))).toBe(false);
    });
  });
});
