/**
 * Whether a worker has looked at every question of a tree turn. A radio question is seen once
 * answered; a checkbox question once something is ticked or the worker confirmed "None of these"
 * (its stored value `{}` alone does not say so: opening a turn already records it). The page moves
 * on to the next turn by itself only when a turn is complete and seen.
 */
import type { DepContext } from './dependencies';
import { answersOf, isCheckbox, isPlainObject, isShown, normalizeTree, questionsOf, type TreePath } from './tree';
import type { TreeValue } from './types';

/** A stable key for a question at a path of the tree. */
export function questionKey(path: TreePath, question: string): string {
  return JSON.stringify([...path, question]);
}

/** Keys of the shown checkbox questions with nothing ticked, recursively under chosen answers. */
function emptyCheckboxes(spec: unknown, value: unknown, turn: DepContext): string[] {
  const found: string[] = [];
  const walk = (levelSpec: unknown, level: TreeValue, path: TreePath) => {
    for (const [q, qs] of questionsOf(levelSpec)) {
      if (!isShown(qs, level, turn)) continue;
      const chosen = isPlainObject(level[q]) ? level[q] : {};
      if (isCheckbox(qs) && Object.keys(chosen).length === 0) found.push(questionKey(path, q));
      for (const [a, sub] of answersOf(qs)) {
        if (Object.prototype.hasOwnProperty.call(chosen, a)) {
          walk(sub, isPlainObject(chosen[a]) ? chosen[a] : {}, [...path, [q, a] as const]);
        }
      }
    }
  };
  walk(spec, isPlainObject(value) ? (value as TreeValue) : {}, []);
  return found;
}

/** Every checkbox question has a tick or a confirmed "None of these". */
export function checkboxesSeen(
  spec: unknown,
  value: unknown,
  turn: DepContext,
  confirmedNone: ReadonlySet<string>,
): boolean {
  return emptyCheckboxes(spec, value, turn).every((key) => confirmedNone.has(key));
}

/** "None of these" for checkbox question `q` at `path`: its ticks (and what they opened) go. */
export function clearCheckbox(
  spec: unknown,
  value: TreeValue | undefined,
  path: TreePath,
  q: string,
  turn: DepContext,
): TreeValue {
  const root: TreeValue = value ? (JSON.parse(JSON.stringify(value)) as TreeValue) : {};
  let level = root;
  for (const [pq, pa] of path) {
    const next = level[pq]?.[pa];
    if (!isPlainObject(next)) return normalizeTree(spec, root, turn);
    level = next;
  }
  level[q] = {};
  return normalizeTree(spec, root, turn);
}
