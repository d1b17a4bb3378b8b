/**
 * Named dependency functions for `_dep_` conditions in question trees.
 *
 * The same registry exists on the server (blueprints/static_annotation/dependencies.py); the names
 * and meanings must stay identical (docs/worker-api.md, "Conditional questions").
 *
 * A function receives the `_dep_` arguments, the answers at the question's own level of the tree
 * (its siblings) and the annotated turn with the bucket's values so far, and says whether the
 * question is shown.
 */
import type { TreeValue, TurnContext } from './types';

/**
 * What a condition may look at besides the siblings. Build it with `turnContext` (context.ts);
 * without `index`/`targets` there is no previous turn (as for a dialogue-level value).
 */
export interface DepContext extends TurnContext {
  /** The annotated turn's index; null for a dialogue-level value. */
  index?: number | null;
  /** The bucket's target turns in this dialogue, ascending. */
  targets?: readonly number[];
  /** The bucket's values in this dialogue so far: target ("1", "dialogue") -> value. */
  values?: Readonly<Record<string, unknown>>;
}

export type DependencyFn = (args: unknown, siblings: TreeValue, turn: DepContext) => boolean;

interface AnsweredArgs {
  question: string;
  answer?: string;
}

function isAnsweredArgs(args: unknown): args is AnsweredArgs {
  return (
    typeof args === 'object' &&
    args !== null &&
    typeof (args as AnsweredArgs).question === 'string' &&
    ((args as AnsweredArgs).answer === undefined || typeof (args as AnsweredArgs).answer === 'string')
  );
}

/** The sibling question `question` has `answer` chosen (any answer when `answer` is absent). */
export const answered: DependencyFn = (args, siblings) => {
  if (!isAnsweredArgs(args)) return false;
  const chosen = siblings[args.question];
  if (typeof chosen !== 'object' || chosen === null) return false;
  if (args.answer === undefined) return Object.keys(chosen).length > 0;
  return Object.prototype.hasOwnProperty.call(chosen, args.answer);
};

/** The opposite of `answered`. */
export const not_answered: DependencyFn = (args, siblings, turn) => !answered(args, siblings, turn);

/** The annotated turn is spoken by the given speaker (`"system"` or `"user"`). */
export const speaker: DependencyFn = (args, _siblings, turn) =>
  typeof args === 'string' && turn.speaker === args;

/** The original platform's pairs for `boolPrevTurnExpect`, used when the conf gives no `any_of`. */
export const PREV_TURN_PAIRS: ReadonlyArray<readonly [string, string]> = [
  [
    'If you were to respond to what SPEAKER_X just said (as SPEAKER_Y), would you think it is ' +
      'appropriate to move on to a new talking point WITHOUT directly acknowledging what SPEAKER_X ' +
      'just said?',
    'No',
  ],
  ['Did SPEAKER_X prompt SPEAKER_Y for information?', 'Yes'],
  ['Is SPEAKER_X following up on what SPEAKER_Y just said last turn?', 'No'],
];

/**
 * `expected` is the chosen answer or its first words: "No" matches "No" and "No, SPEAKER_X
 * ignored…" but not "Not applicable…" (the next character must not be a letter or digit).
 */
export function answerMatches(chosen: string, expected: string): boolean {
  if (!chosen.startsWith(expected)) return false;
  const next = chosen.codePointAt(expected.length);
  return next === undefined || !/[\p{L}\p{N}]/u.test(String.fromCodePoint(next));
}

function chosenAnywhere(value: unknown, question: string, answer: string): boolean {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  for (const [asked, chosen] of Object.entries(value as Record<string, unknown>)) {
    if (typeof chosen !== 'object' || chosen === null || Array.isArray(chosen)) continue;
    const answers = Object.keys(chosen);
    if (asked === question && answers.some((a) => answerMatches(a, answer))) return true;
    if (Object.values(chosen).some((nested) => chosenAnywhere(nested, question, answer))) return true;
  }
  return false;
}

/** The (question, answer) pairs of a `boolPrevTurnExpect` (the original's three by default). */
function prevTurnPairs(args: unknown): ReadonlyArray<readonly [string, string]> {
  if (typeof args === 'object' && args !== null && Array.isArray((args as { any_of?: unknown }).any_of)) {
    return (args as { any_of: unknown[] }).any_of.filter(
      (p): p is [string, string] => Array.isArray(p) && p.length === 2 && p.every((s) => typeof s === 'string'),
    );
  }
  return PREV_TURN_PAIRS;
}

/** The closest target turn before the annotated one; null for the first target (or no turn). */
function previousTarget(turn: DepContext): number | null {
  if (turn.index === undefined || turn.index === null) return null;
  const index = turn.index;
  const earlier = (turn.targets ?? []).filter((t) => t < index);
  return earlier.length > 0 ? Math.max(...earlier) : null;
}

/**
 * The original's `boolPrevTurnExpect`: shown on the first target turn; afterwards only when the
 * previous target turn of this bucket has one of the pairs' answers chosen (at any depth).
 */
export const boolPrevTurnExpect: DependencyFn = (args, _siblings, turn) => {
  const previous = previousTarget(turn);
  if (previous === null) return true;
  const value = turn.values?.[String(previous)];
  return prevTurnPairs(args).some(([q, a]) => chosenAnywhere(value, q, a));
};

export const DEPENDENCIES: Readonly<Record<string, DependencyFn>> = Object.freeze({
  answered,
  not_answered,
  speaker,
  boolPrevTurnExpect,
});

/**
 * Whether a `_dep_` object holds: every named function in it must hold. A missing `_dep_` holds.
 * The server refuses unknown function names at launch; should one still arrive, the question is
 * shown (so the worker can answer it) and a warning is logged.
 */
export function dependencyHolds(dep: unknown, siblings: TreeValue, turn: DepContext): boolean {
  if (dep === undefined || dep === null) return true;
  if (typeof dep !== 'object') return true;
  for (const [name, args] of Object.entries(dep as Record<string, unknown>)) {
    const fn = Object.prototype.hasOwnProperty.call(DEPENDENCIES, name) ? DEPENDENCIES[name] : undefined;
    if (!fn) {
      console.warn(`Unknown _dep_ function "${name}"`);
      continue;
    }
    if (!fn(args, siblings, turn)) return false;
  }
  return true;
}
