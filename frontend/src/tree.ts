/**
 * Question trees of the `button_flow` family.
 *
 * A bucket's `options` is `{question: {"_type_"?, "_dep_"?, answer: {sub_question: {...}}}}`; the
 * stored value is the chosen part of it: `{question: {answer: {sub_question: {sub_answer: {}}}}}`.
 * These helpers are pure: they never mutate their inputs.
 */
import { dependencyHolds, type DepContext } from './dependencies';
import type { QuestionSpec, QuestionsSpec, TreeValue } from './types';

const RESERVED_KEYS = new Set(['_type_', '_dep_']);

/** A position in a value tree: the (question, chosen answer) pairs leading to a level. */
export type TreePath = ReadonlyArray<readonly [string, string]>;

export function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/** The questions of one level of a tree spec, in order. */
export function questionsOf(spec: unknown): Array<[string, QuestionSpec]> {
  if (!isPlainObject(spec)) return [];
  return Object.entries(spec)
    .filter(([key, q]) => !RESERVED_KEYS.has(key) && isPlainObject(q))
    .map(([key, q]) => [key, q as QuestionSpec]);
}

/** The answers of a question, each with the nested questions it opens, in order. */
export function answersOf(question: QuestionSpec): Array<[string, QuestionsSpec]> {
  return Object.entries(question)
    .filter(([key]) => !RESERVED_KEYS.has(key))
    .map(([key, sub]) => [key, (isPlainObject(sub) ? sub : {}) as QuestionsSpec]);
}

/** A checkbox question (`"_type_": {"checkbox": {}}`) takes any number of answers, including none. */
export function isCheckbox(question: QuestionSpec): boolean {
  const t = question._type_;
  return isPlainObject(t) && hasOwn(t, 'checkbox');
}

/** Whether a question is shown, given the answers of its own level (its siblings). */
export function isShown(question: QuestionSpec, siblings: TreeValue, turn: DepContext): boolean {
  return dependencyHolds(question._dep_, siblings, turn);
}

function normalizeOnce(spec: unknown, raw: Record<string, unknown>, turn: DepContext, fill: boolean): TreeValue {
  const out: TreeValue = {};
  const siblings = raw as TreeValue;
  for (const [q, qs] of questionsOf(spec)) {
    if (!isShown(qs, siblings, turn)) continue;
    const chosen = isPlainObject(raw[q]) ? (raw[q] as Record<string, unknown>) : undefined;
    const answers = answersOf(qs);
    if (isCheckbox(qs)) {
      const entry: Record<string, TreeValue> = {};
      for (const [a, sub] of answers) {
        if (chosen && hasOwn(chosen, a)) {
          entry[a] = normalizeOnce(sub, isPlainObject(chosen[a]) ? chosen[a] : {}, turn, fill);
        }
      }
      if (fill || chosen) out[q] = entry;
    } else if (chosen) {
      for (const [a, sub] of answers) {
        if (hasOwn(chosen, a)) {
          out[q] = { [a]: normalizeOnce(sub, isPlainObject(chosen[a]) ? chosen[a] : {}, turn, fill) };
          break;
        }
      }
    }
  }
  return out;
}

/**
 * The valid form of a value for this tree: drops unknown questions and answers, hidden questions
 * (`_dep_`), extra answers of radio questions and answers nested under unchosen answers; adds `{}`
 * ("none of these") for every shown checkbox question that has no entry yet, unless `fill` is
 * false (a turn re-checked because another turn changed: what the worker has not seen stays open).
 */
export function normalizeTree(spec: unknown, value: unknown, turn: DepContext, fill = true): TreeValue {
  let current = normalizeOnce(spec, isPlainObject(value) ? value : {}, turn, fill);
  // A dependency may look at a sibling that is itself pruned in the same pass: repeat until stable.
  for (let i = 0; i < 10; i++) {
    const next = normalizeOnce(spec, current, turn, fill);
    if (JSON.stringify(next) === JSON.stringify(current)) break;
    current = next;
  }
  return current;
}

function cloneTree(value: TreeValue | undefined): TreeValue {
  return value ? (JSON.parse(JSON.stringify(value)) as TreeValue) : {};
}

function levelAt(root: TreeValue, path: TreePath): TreeValue {
  let level = root;
  for (const [q, a] of path) {
    if (!isPlainObject(level[q])) level[q] = {};
    if (!isPlainObject(level[q][a])) level[q][a] = {};
    level = level[q][a];
  }
  return level;
}

/**
 * Choose answer `a` of radio question `q` at `path`. The answers nested below the previously
 * chosen answer are cleared; choosing the already chosen answer keeps its nested answers.
 */
export function chooseRadio(
  spec: unknown,
  value: TreeValue | undefined,
  path: TreePath,
  q: string,
  a: string,
  turn: DepContext,
): TreeValue {
  const root = cloneTree(value);
  const level = levelAt(root, path);
  const previous = isPlainObject(level[q]) ? level[q] : {};
  level[q] = { [a]: hasOwn(previous, a) && isPlainObject(previous[a]) ? previous[a] : {} };
  return normalizeTree(spec, root, turn);
}

/** Check or uncheck answer `a` of checkbox question `q` at `path`; unchecking clears its subtree. */
export function toggleCheckbox(
  spec: unknown,
  value: TreeValue | undefined,
  path: TreePath,
  q: string,
  a: string,
  checked: boolean,
  turn: DepContext,
): TreeValue {
  const root = cloneTree(value);
  const level = levelAt(root, path);
  const entry: Record<string, TreeValue> = isPlainObject(level[q]) ? { ...level[q] } : {};
  if (checked) {
    if (!hasOwn(entry, a)) entry[a] = {};
  } else {
    delete entry[a];
  }
  level[q] = entry;
  return normalizeTree(spec, root, turn);
}

export interface TreeGap {
  question: string;
  kind: 'radio' | 'checkbox';
}

/**
 * What keeps a tree value from being complete: every shown radio question needs an answer, every
 * shown checkbox question needs an entry (`{}` counts), recursively under the chosen answers.
 */
export function treeGaps(spec: unknown, value: unknown, turn: DepContext): TreeGap[] {
  const gaps: TreeGap[] = [];
  const walk = (levelSpec: unknown, level: TreeValue) => {
    for (const [q, qs] of questionsOf(levelSpec)) {
      if (!isShown(qs, level, turn)) continue;
      const chosen = level[q];
      const answers = answersOf(qs);
      if (isCheckbox(qs)) {
        if (!isPlainObject(chosen)) {
          gaps.push({ question: q, kind: 'checkbox' });
          continue;
        }
        for (const [a, sub] of answers) {
          if (hasOwn(chosen, a)) walk(sub, isPlainObject(chosen[a]) ? chosen[a] : {});
        }
      } else {
        const picked = isPlainObject(chosen) ? answers.find(([a]) => hasOwn(chosen, a)) : undefined;
        if (!picked) {
          gaps.push({ question: q, kind: 'radio' });
          continue;
        }
        const [a, sub] = picked;
        walk(sub, isPlainObject(chosen![a]) ? chosen![a] : {});
      }
    }
  };
  walk(spec, isPlainObject(value) ? (value as TreeValue) : {});
  return gaps;
}
