/**
 * What the task is: the requester's description and each bucket's instructions. Shown on the
 * "Before you start" screen of every kind of unit, and behind the top bar's "Task instructions"
 * button all through the task.
 */
import { useId, useMemo, useState, type ReactNode } from 'react';
import { bucketTitle, makeShowHtml, placeholderNames, speakerNames } from '../display';
import type { Unit } from '../types';
import { InstructionsDialog } from './InstructionsDialog';
import { TrustedHtml } from './TrustedHtml';

/** The buckets among `names` (in that order, once each) that have instructions. */
export function instructedBuckets(unit: Unit, names: string[]): string[] {
  return [...new Set(names)].filter((name) => unit.buckets?.[name]?.instructions_html);
}

interface Props {
  unit: Unit;
  /** The unit's buckets in the order the worker meets them. */
  bucketNames: string[];
  /** Facts about this task (steps, turns), after the instructions. */
  children?: ReactNode;
}

export function TaskBriefing({ unit, bucketNames, children }: Props) {
  const showHtml = useMemo(() => makeShowHtml(placeholderNames(speakerNames(unit.speaker_names), null)), [unit]);
  const instructed = instructedBuckets(unit, bucketNames);
  return (
    <>
      {unit.task?.description_html && <TrustedHtml className="rich" html={showHtml(unit.task.description_html)} />}
      {instructed.length > 0 && (
        <div className="instructions">
          <h3>Instructions</h3>
          {instructed.map((name) => (
            <section key={name} className="panel">
              <h4>{bucketTitle(unit.buckets[name].task_title || name)}</h4>
              <TrustedHtml className="rich" html={showHtml(unit.buckets[name].instructions_html ?? '')} />
            </section>
          ))}
        </div>
      )}
      {children}
    </>
  );
}

/** The top bar's "Task instructions" button and its dialog; nothing when there is nothing to show. */
export function BriefingButton(props: Props) {
  const [open, setOpen] = useState(false);
  const id = useId();
  const { unit, bucketNames } = props;
  if (!unit.task?.description_html && instructedBuckets(unit, bucketNames).length === 0) return null;
  return (
    <>
      <button type="button" className="btn btn-quiet btn-small" aria-haspopup="dialog" aria-controls={id} onClick={() => setOpen(true)}>
        Task instructions
      </button>
      <InstructionsDialog id={id} open={open} title="Task instructions" onClose={() => setOpen(false)}>
        <TaskBriefing {...props} />
      </InstructionsDialog>
    </>
  );
}
