import { useEffect } from 'react';
import type { DepContext } from '../dependencies';
import type { Show } from '../display';
import { clearCheckbox, questionKey } from '../seen';
import { chooseRadio, normalizeTree, toggleCheckbox, type TreePath } from '../tree';
import type { Bucket, BucketValue, TreeValue } from '../types';
import { isTreeBucket } from '../values';
import { ForeachQuestions, LikertQuestions, MultiselectQuestion } from './Renderers';
import { TextAnswer } from './TextAnswer';
import { TreeQuestions, type HelpLink } from './TreeQuestions';

export interface TurnAnswersProps {
  bucket: Bucket;
  /** The annotated turn as dependencies see it (its speaker filters multiselect options). */
  turn: DepContext;
  value: unknown;
  /** Texts of this turn (`SPEAKER_X` = the turn's speaker). */
  show: Show;
  help: HelpLink | null;
  /** Changes the turn's value from the latest one (undefined removes it). */
  setValue: (fn: (old: unknown) => BucketValue | undefined) => void;
  /** Tree buckets: the checkbox questions whose "None of these" the worker confirmed (seen.ts). */
  none: ReadonlySet<string>;
  setNone: (none: ReadonlySet<string>) => void;
  /** Tree buckets: a radio or "None of these" click changed the value from `before` to `after`. */
  onTreeClick?: (before: unknown, after: unknown, noneBefore: ReadonlySet<string>, noneAfter: ReadonlySet<string>) => void;
}

function withNone(none: ReadonlySet<string>, key: string, confirmed: boolean): ReadonlySet<string> {
  const next = new Set(none);
  if (confirmed) next.add(key);
  else next.delete(key);
  return next;
}

/**
 * The questions of one turn of a turn-level bucket, with its config's renderer. Showing a turn
 * records it as seen: a tree's checkbox questions get `{}` ("none of these"), a multiselect
 * starts as `[]` ("none apply").
 */
export function TurnAnswers({ bucket, turn, value, show, help, setValue, none, setNone, onTreeClick }: TurnAnswersProps) {
  const tree = isTreeBucket(bucket);
  // Once, when the turn is shown (later changes are the worker's).
  useEffect(() => {
    if (tree) setValue((old) => (old === undefined ? normalizeTree(bucket.options, {}, turn) : (old as BucketValue)));
    else if (bucket.config === 'multiselect') setValue((old) => (old === undefined ? [] : (old as BucketValue)));
  }, []);

  if (tree) {
    const treeValue = value as TreeValue | undefined;
    return (
      <TreeQuestions
        spec={bucket.options}
        value={treeValue}
        turn={turn}
        show={show}
        help={bucket.config === 'nondetails_nonhelp_button_flow' ? null : help}
        noneOfThese={{
          isConfirmed: (path, q) => none.has(questionKey(path, q)),
          onChange: (path, q, confirmed) => {
            const after = withNone(none, questionKey(path, q), confirmed);
            setNone(after);
            if (!confirmed) return;
            setValue((old) => clearCheckbox(bucket.options, old as TreeValue | undefined, path, q, turn));
            onTreeClick?.(value, clearCheckbox(bucket.options, treeValue, path, q, turn), none, after);
          },
        }}
        onRadio={(path: TreePath, q, a) => {
          setValue((old) => chooseRadio(bucket.options, old as TreeValue | undefined, path, q, a, turn));
          onTreeClick?.(value, chooseRadio(bucket.options, treeValue, path, q, a, turn), none, none);
        }}
        onCheckbox={(path: TreePath, q, a, checked) => {
          // A tick is an answer: any "None of these" of that question no longer holds.
          if (checked && none.has(questionKey(path, q))) setNone(withNone(none, questionKey(path, q), false));
          setValue((old) => toggleCheckbox(bucket.options, old as TreeValue | undefined, path, q, a, checked, turn));
        }}
      />
    );
  }
  const ratings = value as Record<string, number> | undefined;
  if (bucket.text) {
    return (
      <TextAnswer
        label={show(bucket.question ?? '')}
        limits={bucket.text}
        value={typeof value === 'string' ? value : ''}
        onChange={(v) => setValue(() => (v === '' ? undefined : v))}
      />
    );
  }
  switch (bucket.config) {
    case 'multiselect':
      return (
        <MultiselectQuestion
          bucket={bucket}
          speaker={turn.speaker}
          value={value as string[] | undefined}
          onChange={(v) => setValue(() => v)}
          show={show}
        />
      );
    case 'likert-5-turn':
      return <LikertQuestions bucket={bucket} value={ratings} onChange={(v) => setValue(() => v)} show={show} />;
    case 'foreach-5-select':
      return <ForeachQuestions bucket={bucket} value={ratings} onChange={(v) => setValue(() => v)} show={show} />;
    default:
      return null;
  }
}
