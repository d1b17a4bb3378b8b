import { useCallback, useLayoutEffect, useId, useMemo, useRef, useState, type ReactNode } from 'react';
import type { Problem } from '../api';
import type { Step } from '../answers';
import { bucketTitle, makeShowHtml, makeShows, placeholderNames, speakerNames, turnNumber, type Show } from '../display';
import { formatMissing, stepMissing } from '../require';
import type { Answers, Unit } from '../types';
import { InstructionsDialog } from './InstructionsDialog';
import { StepView, stepTitle, type Update } from './StepView';

/** A submission the server refused: its message and the problems it named. */
export interface SubmitError {
  message: string;
  problems: Problem[];
}

/** The show for a turn of a dialogue (its speaker is SPEAKER_X), or for the whole dialogue. */
export function turnShow(
  unit: Unit,
  shows: (speaker: string | null) => Show,
  dialogueKey: string | undefined,
  turn: number | null | undefined,
): Show {
  if (typeof turn !== 'number') return shows(null);
  const dialogue = unit.dialogues.find((d) => d.key === dialogueKey);
  const spoken = dialogue?.turns.find((t) => t.index === turn);
  return shows(spoken ? spoken.speaker : null);
}

interface Props {
  /** What the steps show: the dialogues, each with its buckets. */
  unit: Unit;
  steps: Step[];
  answers: Answers;
  update: Update;
  /** 0 is the overview (`overview`), k (1..N) is steps[k - 1]. */
  stepIndex: number;
  /** Back, and the "Go to step N" links. */
  onStep: (index: number) => void;
  /** Next, and on the last step `finishLabel`: the caller moves on (or submits). */
  onAdvance: () => void;
  /** Step 0; without one the steps start at 1. */
  overview?: ReactNode;
  /** The line under a step's heading, e.g. "Dialogue 1 of 2". */
  stepContext: (step: Step) => string;
  /** Shown above the step's questions (training feedback). */
  feedback?: ReactNode;
  /** Shown first in the footer (training checks). */
  notes?: ReactNode;
  submitError: SubmitError | null;
  /** The last step's button ("Submit"). */
  finishLabel: string;
  /** Replaces the button's label on every step (e.g. "Check again"). */
  advanceLabel?: string | null;
  /** A request is under way: the button waits. */
  busy: boolean;
  /** Under the buttons, e.g. "Submitting…". */
  status?: string | null;
  /** Move focus to the heading when shown (not only when the step changes). */
  focusOnMount?: boolean;
  advanceDelayMs?: number;
}

/**
 * The annotation steps (dialogue × bucket) with their footer: what is still missing, the
 * server's problems with links to their steps, Back / Next, and the instructions dialog.
 * Rendered as the page's `main` and `footer`; the caller owns the answers and the step.
 */
export function AnnotationSteps({
  unit,
  steps,
  answers,
  update,
  stepIndex,
  onStep,
  onAdvance,
  overview,
  stepContext,
  feedback,
  notes,
  submitError,
  finishLabel,
  advanceLabel,
  busy,
  status,
  focusOnMount = false,
  advanceDelayMs,
}: Props) {
  const names = useMemo(() => speakerNames(unit.speaker_names), [unit]);
  const shows = useMemo(() => makeShows(names), [names]);
  const show = shows(null);
  const showHtml = useMemo(() => makeShowHtml(placeholderNames(names, null)), [names]);
  const [helpBucket, setHelpBucket] = useState<string | null>(null);
  const dialogId = useId();
  const hintId = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const firstStep = overview === undefined ? 1 : 0;

  const missingByStep = useMemo(
    // Raw texts here; each item is shown with the names of its own turn (see `hints`).
    () => steps.map((s) => stepMissing(unit, s.dialogueKey, s.bucketName, answers)),
    [steps, unit, answers],
  );

  const shownStep = useRef(focusOnMount ? -1 : stepIndex);
  useLayoutEffect(() => {
    if (shownStep.current === stepIndex) return;
    shownStep.current = stepIndex;
    if (typeof window.scrollTo === 'function') {
      try {
        window.scrollTo({ top: 0 });
      } catch {
        /* jsdom */
      }
    }
    headingRef.current?.focus();
  }, [stepIndex]);

  const current = stepIndex > 0 ? steps[stepIndex - 1] : null;
  const missing = current ? missingByStep[stepIndex - 1] : [];
  const isLast = stepIndex === steps.length;
  const firstIncomplete = missingByStep.findIndex((m) => m.length > 0);

  const helpFor = useCallback(
    (bucketName: string) => {
      const html = unit.buckets[bucketName]?.instructions_html;
      return html ? { dialogId, open: () => setHelpBucket(bucketName) } : null;
    },
    [unit, dialogId],
  );
  const helpBucketObj = helpBucket ? unit.buckets[helpBucket] : null;

  // What the worker is told is missing.
  let hints: string[] = [];
  let gotoIncomplete: number | null = null;
  if (current && missing.length > 0) {
    hints = missing.map((m) =>
      formatMissing({ ...m, message: turnShow(unit, shows, current.dialogueKey, m.turn)(m.message) }),
    );
  } else if (isLast && firstIncomplete !== -1) {
    gotoIncomplete = firstIncomplete + 1;
    hints = [`Step ${gotoIncomplete} is not complete yet.`];
  }

  return (
    <>
      <main className="content" id="main">
        {current === null ? (
          <section className="overview">
            <h2 ref={headingRef} tabIndex={-1}>
              Before you start
            </h2>
            {overview}
          </section>
        ) : (
          <section
            className={unit.buckets[current.bucketName]?.level === 'dialogue' ? 'step is-wide' : 'step'}
            key={stepIndex}
          >
            <div className="step-head">
              <div>
                <h2 ref={headingRef} tabIndex={-1}>
                  {stepTitle(unit, current)}
                </h2>
                <p className="muted small">{stepContext(current)}</p>
              </div>
              {unit.buckets[current.bucketName]?.instructions_html && (
                <button
                  type="button"
                  className="btn btn-quiet"
                  aria-haspopup="dialog"
                  aria-controls={dialogId}
                  onClick={() => setHelpBucket(current.bucketName)}
                >
                  Instructions
                </button>
              )}
            </div>
            {feedback}
            <StepView
              unit={unit}
              step={current}
              answers={answers}
              update={update}
              show={show}
              help={helpFor(current.bucketName)}
              advanceDelayMs={advanceDelayMs}
            />
          </section>
        )}
      </main>

      <footer className="footer">
        {notes}
        {submitError && (
          <div className="submit-error" role="alert">
            <p>
              <strong>Your answers were not accepted:</strong> {submitError.message}
            </p>
            {submitError.problems.length > 0 && (
              <ul>
                {submitError.problems.map((p, i) => {
                  const target = steps.findIndex((s) => s.dialogueKey === p.dialogue && s.bucketName === p.bucket);
                  return (
                    <li key={i}>
                      {target >= 0 && `Step ${target + 1}`}
                      {typeof p.turn === 'number' && `${target >= 0 ? ', ' : ''}Turn ${turnNumber(p.turn)}`}
                      {(target >= 0 || typeof p.turn === 'number') && ': '}
                      {turnShow(unit, shows, p.dialogue, p.turn)(p.message)}
                      {target >= 0 && target + 1 !== stepIndex && (
                        <>
                          {' '}
                          <button type="button" className="link-button" onClick={() => onStep(target + 1)}>
                            Go to step {target + 1}
                          </button>
                        </>
                      )}
                    </li>
                  );
                })}
              </ul>
            )}
          </div>
        )}
        {hints.length > 0 && (
          <div className="missing" id={hintId}>
            <span className="missing-title">{hints.length > 1 ? `Still to do (${hints.length}):` : 'Still to do:'}</span>{' '}
            <ul>
              {hints.map((h, i) => (
                <li key={i}>{h}</li>
              ))}
            </ul>
            {gotoIncomplete !== null && (
              <button type="button" className="link-button" onClick={() => onStep(gotoIncomplete!)}>
                Go to step {gotoIncomplete}
              </button>
            )}
          </div>
        )}
        <nav className="step-nav" aria-label="Steps">
          <button type="button" className="btn" onClick={() => onStep(stepIndex - 1)} disabled={stepIndex <= firstStep}>
            Back
          </button>
          <div className="progress">
            <span className="progress-text">{current === null ? 'Overview' : `Step ${stepIndex} of ${steps.length}`}</span>
            <span className="progress-bar" aria-hidden="true">
              <span style={{ width: `${steps.length ? (stepIndex / steps.length) * 100 : 0}%` }} />
            </span>
          </div>
          <button
            type="button"
            className="btn btn-primary"
            onClick={onAdvance}
            disabled={missing.length > 0 || busy || (isLast && firstIncomplete !== -1)}
            aria-describedby={hints.length > 0 ? hintId : undefined}
          >
            {advanceLabel ?? (isLast ? finishLabel : 'Next')}
          </button>
        </nav>
        {status && (
          <p className="muted small center" role="status">
            {status}
          </p>
        )}
      </footer>

      <InstructionsDialog
        id={dialogId}
        open={helpBucketObj !== null && helpBucketObj !== undefined}
        title={`Instructions: ${bucketTitle(helpBucketObj?.task_title || helpBucket || '')}`}
        html={showHtml(helpBucketObj?.instructions_html ?? '')}
        onClose={() => setHelpBucket(null)}
      />
    </>
  );
}
