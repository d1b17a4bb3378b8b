import { useCallback, useMemo, useRef, useState } from 'react';
import { ApiError, checkDialogue, newClientId, submit } from '../api';
import { answersForSubmit, buildSteps, restoredStep, sanitizeAnswers, type Step } from '../answers';
import { makeShows, speakerNames } from '../display';
import { stepMissing } from '../require';
import { checkAnnouncement, checkBody, endsDialogue, lastStepOf, needsCheck, stableJson, type CheckRecord } from '../screening';
import { restoreTimings, submitTimings, useStepTimings } from '../timings';
import type { Answers, ScreeningOutcome, Unit } from '../types';
import { useDraftSaver } from '../useDraftSaver';
import { AnnotationSteps, turnShow, type SubmitError } from './AnnotationSteps';
import { Countdown, useCountdown } from './Countdown';
import { SaveIndicator, SaveProblem } from './SaveIndicator';
import { CheckFeedback, ScreeningIntro } from './Screening';
import { BriefingButton, TaskBriefing } from './TaskBriefing';
import { followCompletion } from '../platform';

/**
 * The line under a step's heading: "Dialogue 2 of 3" ("Training dialogue …" in training). A
 * comparison shows two dialogues, so it says "Two dialogues to compare" (and which item of
 * several it is), never "Dialogue 1 of 1".
 */
export function stepContext(unit: Unit, step: Step, training: boolean): string {
  const position = unit.dialogues.findIndex((d) => d.key === step.dialogueKey) + 1;
  const count = unit.dialogues.length;
  if (unit.buckets[step.bucketName]?.config === 'comparative') {
    return count > 1 ? `Two dialogues to compare (item ${position} of ${count})` : 'Two dialogues to compare';
  }
  return `${training ? 'Training dialogue' : 'Dialogue'} ${position} of ${count}`;
}

interface Props {
  unit: Unit;
  token: string;
  /** `screening` is the training outcome of a screening unit's submit. */
  onCompleted: (completionCode: string | null, screening?: ScreeningOutcome) => void;
  /** The unit's time ran out and the worker asks for another one. */
  onTakeNew: () => void;
  /** Test hooks. */
  advanceDelayMs?: number;
  draftDebounceMs?: number;
}

export function Annotator({ unit, token, onCompleted, onTakeNew, advanceDelayMs, draftDebounceMs }: Props) {
  const steps = useMemo(() => buildSteps(unit), [unit]);
  const names = useMemo(() => speakerNames(unit.speaker_names), [unit]);
  const shows = useMemo(() => makeShows(names), [names]);
  const show = shows(null);
  const [answers, setAnswers] = useState<Answers>(() => sanitizeAnswers(unit, unit.draft?.answers));
  const update = useCallback((fn: (a: Answers) => Answers) => setAnswers(fn), []);

  const [stepIndex, setStepIndex] = useState(() =>
    restoredStep(
      unit.draft?.position,
      steps.map((s) => stepMissing(unit, s.dialogueKey, s.bucketName, answers)),
    ),
  );
  const [submitted, setSubmitted] = useState(false);
  const [submitting, setSubmitting] = useState(false);
  const [submitError, setSubmitError] = useState<SubmitError | null>(null);
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
  const remaining = useCountdown(unit.seconds_remaining);
  // Time over: the server has given the unit back to the pool; the form stays, read-only.
  const timeOver = remaining === 0 && !submitted;
  const saver = useDraftSaver({
    unitId: unit.unit_id,
    token,
    answers,
    position,
    enabled: !submitted && !submitting && !timeOver, // a draft after the submit is refused
    stamp,
    debounceMs: draftDebounceMs,
  });

  const clientId = useRef(newClientId());
  const startedAt = useRef(new Date());

  const isLast = stepIndex === steps.length;

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
      followCompletion(result);
    } catch (e) {
      if (e instanceof ApiError) setSubmitError({ message: e.message, problems: e.problems });
      else setSubmitError({ message: e instanceof Error ? e.message : String(e), problems: [] });
    } finally {
      setSubmitting(false);
    }
  };

  const bucketNames = useMemo(() => steps.map((s) => s.bucketName), [steps]);

  const lastCheck = current ? checks[current.dialogueKey]?.result : undefined;
  const toCorrect = !!lastCheck && !lastCheck.corrected;
  const checksHere = !!training && !!current && endsDialogue(steps, stepIndex - 1);

  return (
    <div className="app">
      <header className="topbar">
        <h1 className="task-title">{show(unit.task?.title || 'Annotation task')}</h1>
        <div className="topbar-status">
          <BriefingButton unit={unit} bucketNames={bucketNames} />
          {remaining !== null && <Countdown seconds={remaining} />}
          <SaveIndicator status={saver.status} error={saver.error} retrying={saver.retrying} />
        </div>
      </header>
      <SaveProblem status={saver.status} error={saver.error} retrying={saver.retrying} />
      {timeOver && (
        <div className="banner is-warning time-over" role="alert">
          <p>
            <strong>The time for this unit is over.</strong> Your answers can no longer be changed or submitted, and the
            unit went back to the pool.
          </p>
          <button type="button" className="btn btn-primary" onClick={onTakeNew}>
            Take a new unit
          </button>
        </div>
      )}

      <fieldset className="form-lock" disabled={timeOver}>
        <AnnotationSteps
          unit={unit}
          steps={steps}
          answers={answers}
          update={update}
          stepIndex={stepIndex}
          onStep={goTo}
          onAdvance={() => void advance()}
          overview={
            <>
              {training && <ScreeningIntro info={training} />}
              <TaskBriefing unit={unit} bucketNames={bucketNames} />
              <p className="muted">
                {steps.length === 1 ? 'This task has 1 step.' : `This task has ${steps.length} steps.`} Your answers are
                saved as you go: if you reload this page or come back to the same link, you continue where you were.
              </p>
            </>
          }
          stepContext={(step) => stepContext(unit, step, !!training)}
          feedback={
            training &&
            current &&
            lastCheck && (
              <CheckFeedback result={lastCheck} showFor={(turn) => turnShow(unit, shows, current.dialogueKey, turn)} />
            )
          }
          notes={
            <>
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
            </>
          }
          submitError={submitError}
          finishLabel="Submit"
          advanceLabel={checksHere && toCorrect ? 'Check again' : null}
          busy={submitting || checking}
          status={submitting ? 'Submitting…' : null}
          advanceDelayMs={advanceDelayMs}
        />
      </fieldset>
    </div>
  );
}
