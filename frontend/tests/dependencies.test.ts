import { describe, expect, it } from 'vitest';
import { answered, DEPENDENCIES, dependencyHolds, not_answered, speaker } from '../src/dependencies';

const sys = { speaker: 'system' };
const usr = { speaker: 'user' };

describe('dependency registry', () => {
  it('has exactly the functions of the contract', () => {
    expect(Object.keys(DEPENDENCIES).sort()).toEqual(['answered', 'not_answered', 'speaker']);
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
});
