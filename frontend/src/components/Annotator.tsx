import { useCallback, useEffect, useId, useMemo, useRef, useState } from 'react';
import { ApiError, checkDialogue, newClientId, submit, type Problem } from '../api';
import { answersForSubmit, buildSteps, sanitizeAnswers, type Step } from '../answers';
import { humanize, makeShowHtml, makeShows, placeholderNames, speakerNames, turnNumber, type Show } from '../display';
import { formatMissing, stepMissing, type Missing } from '../require';
import { checkAnnouncement, checkBody, endsDialogue, lastStepOf, needsCheck, stableJson, type CheckRecord } from '../screening';
import { restoreTimings, submitTimings, useStepTimings } from '../timings';
import type { Answers, ScreeningOutcome, Unit } from '../types';
import { useDraftSaver, type SaveStatus } from '../useDraftSaver';
import { Countdown, useCountdown } from './Countdown';
import { InstructionsDialog } from './InstructionsDialog';
import { CheckFeedback, ScreeningIntro } from './Screening';
import { StepView, stepTitle } from './StepView';
import { TrustedHtml } from './TrustedHtml';

interface Props {
  unit: Unit;
  token: string;
  /** `screening` is the training outcome of a screening unit's submit. */
  onCompleted: (completionCode: string | null, screening?: ScreeningOutcome) => void;
  /** Test hooks. */
  advanceDelayMs?: number;
  draftDebounceMs?: number;
}

/** Step 0 is the overview; step k (1..N) is steps[k - 1]. */
function initialStep(unit: Unit, steps: Step[], missing: Missing[][]): number {
  const pos = unit.draft?.position as { step?: unknown } | null | undefined;
  const saved = typeof pos?.step === 'number' && Number.isInteger(pos.step) ? pos.step : 0;
  const firstIncomplete = missing.findIndex((m) => m.length > 0);
  const reachable = firstIncomplete === -1 ? steps.length : firstIncomplete + 1;
  return Math.max(0, Math.min(saved, steps.length, reachable));
}

/** The show for a turn of a dialogue (its speaker is SPEAKER_X), or for the whole dialogue. */
function turnShow(unit: Unit, shows: (speaker: string | null) => Show, dialogueKey: string | undefined, turn: number | null | undefined): Show {
  if (typeof turn !== 'number') return shows(null);
  const dialogue = unit.dialogues.find((d) => d.key === dialogueKey);
  const spoken = dialogue?.turns.find((t) => t.index === turn);
  return shows(spoken ? spoken.speaker : null);
}

function SaveIndicator({ status, error, retrying }: { status: SaveStatus; error: string | null; retrying: boolean }) {
  if (status === 'idle') return null;
  if (status === 'error') {
    return (
      <span className="save-status is-error" role="status" title={error ?? undefined}>
        {retrying ? 'Not saved — retrying' : 'Not saved'}
      </span>
    );
  }
  return <span className="save-status">{status === 'saving' ? 'Saving…' : 'Saved'}</span>;
}

export function Annotator({ unit, token, onCompleted, advanceDelayMs, draftDebounceMs }: Props) {
  const steps = useMemo(() => buildSteps(unit), [unit]);
  const names = useMemo(() => speakerNames(unit.speaker_names), [unit]);
  const shows = useMemo(() => makeShows(names), [names]);
  const show = shows(null);
  const showHtml = useMemo(() => makeShowHtml(placeholderNames(names, null)), [names]);
  const [answers, setAnswers] = useState<Answers>(() => sanitizeAnswers(unit, unit.draft?.answers));
  const update = useCallback((fn: (a: Answers) => Answers) => setAnswers(fn), []);

  const missingByStep = useMemo(
    // Raw texts here; each item is shown with the names of its own turn (see `hints`).
    () => steps.map((s) => stepMissing(unit, s.dialogueKey, s.bucketName, answers)),
    [steps, unit, answers],
  );
  const [stepIndex, setStepIndex] = useState(() => initialStep(unit, steps, missingByStep));
  const [submitted, setSubmitted] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const [submitError, setSubmitError] = useState<{ message: string; problems: Problem[] } | null>(null);
  const [helpBucket, setHelpBucket] = useState<string | null>(null);
  // Screening units: each training dialogue is checked by the server when the worker leaves it.
  const training = unit.kind === 'screening' && unit.screening ? unit.screening : null;
  const [checks, setChecks] = useState<Record<string, CheckRecord>>({});
  const [checking, setChecking] = useState(false);
  const [announcement, setAnnouncement] = useState('');
  const [checkError, setCheckError] = useState<string | null>(null);

  const current = stepIndex > 0 ? steps[stepIndex - 1] : null;
  const restoredTimings = useMemo(
    () => restoreTimings((unit.draft?.position as { timings?: unknown } | null | undefined)?.timings, steps),
    [unit, steps],
  );
  const timingsAt = useStepTimings(current, restoredTimings);
  const position = useMemo(() => ({ step: stepIndex }), [stepIndex]);
  const stamp = useCallback((p: { step: number }) => ({ ...p, timings: timingsAt(Date.now()) }), [timingsAt]);
  const saver = useDraftSaver({
    unitId: unit.unit_id,
    token,
    answers,
    position,
    enabled: !submitted,
    stamp,
    debounceMs: draftDebounceMs,
  });
  const remaining = useCountdown(unit.seconds_remaining);

  const dialogId = useId();
  const hintId = useId();
  const headingRef = useRef<HTMLHeadingElement>(null);
  const clientId = useRef(newClientId());
  const startedAt = useRef(new Date());

  const shownStep = useRef(stepIndex);
  useEffect(() => {
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

  const missing = current ? missingByStep[stepIndex - 1] : [];
  const isLast = stepIndex === steps.length;
  const firstIncomplete = missingByStep.findIndex((m) => m.length > 0);
  const canSubmit = firstIncomplete === -1 && !submitting;
  const dialogueNumber = current ? unit.dialogues.findIndex((d) => d.key === current.dialogueKey) + 1 : 0;

  const goTo = (index: number) => {
    setSubmitError(null);
    setCheckError(null);
    setStepIndex(Math.max(0, Math.min(index, steps.length)));
  };

  /** Check one training dialogue on the server (unless its answers were already corrected). */
  const runCheck = async (dialogueKey: string): Promise<boolean> => {
    if (!needsCheck(checks[dialogueKey], answers, dialogueKey)) return true;
    const body = checkBody(answers, dialogueKey);
    setChecking(true);
    setCheckError(null);
    try {
      const result = await checkDialogue(unit.unit_id, token, dialogueKey, body);
      setChecks((c) => ({ ...c, [dialogueKey]: { sent: stableJson(body), result } }));
      const number = unit.dialogues.findIndex((d) => d.key === dialogueKey) + 1;
      setAnnouncement(checkAnnouncement(result, number));
      if (!result.corrected) {
        const last = lastStepOf(steps, dialogueKey);
        if (last + 1 !== stepIndex) setStepIndex(last + 1);
      }
      return result.corrected;
    } catch (e) {
      setCheckError(e instanceof Error ? e.message : String(e));
      return false;
    } finally {
      setChecking(false);
    }
  };

  /** Next / Submit: a training dialogue's last step checks it first; Submit checks them all. */
  const advance = async () => {
    if (training && current && endsDialogue(steps, stepIndex - 1)) {
      if (!(await runCheck(current.dialogueKey))) return;
    }
    if (!isLast) {
      goTo(stepIndex + 1);
      return;
    }
    if (training) {
      // After a reload the page does not know earlier checks: any dialogue not known to be
      // corrected is checked again (the server keeps the first check's mistakes).
      for (const d of unit.dialogues) {
        if (d.key !== current?.dialogueKey && !(await runCheck(d.key))) return;
      }
    }
    await doSubmit();
  };

  const doSubmit = async () => {
    setSubmitting(true);
    setSubmitError(null);
    const submittedAt = new Date();
    try {
      const result = await submit(
        unit.unit_id,
        token,
        answersForSubmit(answers),
        submitTimings(startedAt.current, submittedAt, timingsAt(submittedAt.getTime())),
        clientId.current,
      );
      setSubmitted(true);
      onCompleted(result?.completion_code ?? null, result?.screening);
    } catch (e) {
      if (e instanceof ApiError) setSubmitError({ message: e.message, problems: e.problems });
      else setSubmitError({ message: e instanceof Error ? e.message : String(e), problems: [] });
    } finally {
      setSubmitting(false);
    }
  };

  const helpFor = (bucketName: string) => {
    const html = unit.buckets[bucketName]?.instructions_html;
    return html ? { dialogId, open: () => setHelpBucket(bucketName) } : null;
  };

  const instructionBuckets = useMemo(() => {
    const seen: string[] = [];
    for (const s of steps) {
      if (!seen.includes(s.bucketName) && unit.buckets[s.bucketName]?.instructions_html) seen.push(s.bucketName);
    }
    return seen;
  }, [steps, unit]);

  const helpBucketObj = helpBucket ? unit.buckets[helpBucket] : null;
  const lastCheck = current ? checks[current.dialogueKey]?.result : undefined;
  const toCorrect = !!lastCheck && !lastCheck.corrected;
  const checksHere = !!training && !!current && endsDialogue(steps, stepIndex - 1);

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
    <div className="app">
      <header className="topbar">
        <h1 className="task-title">{show(unit.task?.title || 'Annotation task')}</h1>
        <div className="topbar-status">
          {remaining !== null && <Countdown seconds={remaining} />}
          <SaveIndicator status={saver.status} error={saver.error} retrying={saver.retrying} />
        </div>
      </header>
      {saver.status === 'error' && !saver.retrying && saver.error && (
        <div className="banner is-error" role="alert">
          Your answers could not be saved: {saver.error}
        </div>
      )}
      {remaining === 0 && (
        <div className="banner is-warning" role="alert">
          The time for this task is over.
        </div>
      )}

      <main className="content" id="main">
        {current === null ? (
          <section className="overview">
            <h2 ref={headingRef} tabIndex={-1}>
              Before you start
            </h2>
            {training && <ScreeningIntro info={training} />}
            {unit.task?.description_html && <TrustedHtml className="rich" html={showHtml(unit.task.description_html)} />}
            {instructionBuckets.length > 0 && (
              <div className="instructions">
                <h3>Instructions</h3>
                {instructionBuckets.map((name) => (
                  <section key={name} className="panel">
                    <h4>{humanize(unit.buckets[name].task_title || name)}</h4>
                    <TrustedHtml className="rich" html={showHtml(unit.buckets[name].instructions_html ?? '')} />
                  </section>
                ))}
              </div>
            )}
            <p className="muted">
              {steps.length === 1 ? 'This task has 1 step.' : `This task has ${steps.length} steps.`} Your answers are
              saved as you go: if you reload this page or come back to the same link, you continue where you were.
            </p>
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
                <p className="muted small">
                  {training ? 'Training dialogue' : 'Dialogue'} {dialogueNumber} of {unit.dialogues.length}
                </p>
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
            {training && lastCheck && (
              <CheckFeedback
                result={lastCheck}
                showFor={(turn) => turnShow(unit, shows, current.dialogueKey, turn)}
              />
            )}
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
        {training && (
          <p className="check-status" role="status" aria-live="polite">
            {checking ? 'Checking your answers…' : announcement}
          </p>
        )}
        {checkError && (
          <div className="submit-error" role="alert">
            <p>
              <strong>Your answers could not be checked:</strong> {checkError}
            </p>
          </div>
        )}
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
                          <button type="button" className="link-button" onClick={() => goTo(target + 1)}>
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
              <button type="button" className="link-button" onClick={() => goTo(gotoIncomplete!)}>
                Go to step {gotoIncomplete}
              </button>
            )}
          </div>
        )}
        <nav className="step-nav" aria-label="Steps">
          <button type="button" className="btn" onClick={() => goTo(stepIndex - 1)} disabled={stepIndex === 0}>
            Back
          </button>
          <div className="progress">
            <span className="progress-text">
              {current === null ? 'Overview' : `Step ${stepIndex} of ${steps.length}`}
            </span>
            <span className="progress-bar" aria-hidden="true">
              <span style={{ width: `${steps.length ? (stepIndex / steps.length) * 100 : 0}%` }} />
            </span>
          </div>
          <button
            type="button"
            className="btn btn-primary"
            onClick={() => void advance()}
            disabled={(isLast && !canSubmit) || missing.length > 0 || checking}
            aria-describedby={hints.length > 0 ? hintId : undefined}
          >
            {checksHere && toCorrect ? 'Check again' : isLast ? 'Submit' : 'Next'}
          </button>
        </nav>
        {submitting && (
          <p className="muted small center" role="status">
            Submitting…
          </p>
        )}
      </footer>

      <InstructionsDialog
        id={dialogId}
        open={helpBucketObj !== null && helpBucketObj !== undefined}
        title={`Instructions: ${humanize(helpBucketObj?.task_title || helpBucket || '')}`}
        html={showHtml(helpBucketObj?.instructions_html ?? '')}
        onClose={() => setHelpBucket(null)}
      />
    </div>
  );
}
