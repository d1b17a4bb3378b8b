/**
 * Named dependency functions for `_dep_` conditions in question trees.
 *
 * The same registry exists on the server (blueprints/static_annotation/dependencies.py); the names
 * and meanings must stay identical (docs/worker-api.md, "Conditional questions").
 *
 * A function receives the `_dep_` arguments, the answers at the question's own level of the tree
 * (its siblings) and the annotated turn, and says whether the question is shown.
 */
import type { TreeValue, TurnContext } from './types';

export type DependencyFn = (args: unknown, siblings: TreeValue, turn: TurnContext) => boolean;

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

export const DEPENDENCIES: Readonly<Record<string, DependencyFn>> = Object.freeze({
  answered,
  not_answered,
  speaker,
});

/**
 * Whether a `_dep_` object holds: every named function in it must hold. A missing `_dep_` holds.
 * The server refuses unknown function names at launch; should one still arrive, the question is
 * shown (so the worker can answer it) and a warning is logged.
 */
export function dependencyHolds(dep: unknown, siblings: TreeValue, turn: TurnContext): boolean {
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
