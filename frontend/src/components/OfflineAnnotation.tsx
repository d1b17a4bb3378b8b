import type { ReactNode } from 'react';
import type { Step } from '../answers';
import { offlineContext } from '../chatAnnotations';
import type { Answers, ChatState, Unit } from '../types';
import type { SaveStatus } from '../useDraftSaver';
import { AnnotationSteps, type SubmitError } from './AnnotationSteps';
import { SaveIndicator, SaveProblem } from './SaveIndicator';
import type { Update } from './StepView';

interface Props {
  title: string;
  chat: ChatState;
  /** The offline dialogues to annotate now, as a static-unit-like object, and its steps. */
  shown: { unit: Unit; steps: Step[] };
  answers: Answers;
  update: Update;
  stepIndex: number;
  onStep: (index: number) => void;
  /** The worker pressed the last step's button (`finishLabel`). */
  onFinish: () => void;
  finishLabel: string;
  submitting: boolean;
  submitError: SubmitError | null;
  saver: { status: SaveStatus; error: string | null; retrying: boolean };
  /** The "Task instructions" button. */
  instructions: ReactNode;
  advanceDelayMs?: number;
}

/**
 * The annotation steps after a chat, embedded in the chat unit: the static page's steps for the
 * conversations just held. The chat unit owns the answers and the draft; the last step's button
 * hands back to it.
 */
export function OfflineAnnotation({
  title,
  chat,
  shown,
  answers,
  update,
  stepIndex,
  onStep,
  onFinish,
  finishLabel,
  submitting,
  submitError,
  saver,
  instructions,
  advanceDelayMs,
}: Props) {
  const dialogues = (chat.annotations?.offline ?? []).flatMap((e) => e.dialogues);
  return (
    <div className="app">
      <header className="topbar">
        <h1 className="task-title">{title}</h1>
        <div className="topbar-status">
          {instructions}
          <SaveIndicator {...saver} />
        </div>
      </header>
      <SaveProblem {...saver} />
      <AnnotationSteps
        unit={shown.unit}
        steps={shown.steps}
        answers={answers}
        update={update}
        stepIndex={stepIndex}
        onStep={onStep}
        onAdvance={() => (stepIndex < shown.steps.length ? onStep(stepIndex + 1) : onFinish())}
        stepContext={(step) => offlineContext(chat, dialogues.find((d) => d.key === step.dialogueKey))}
        submitError={submitError}
        finishLabel={finishLabel}
        busy={submitting}
        status={submitting ? 'Submitting…' : null}
        focusOnMount
        advanceDelayMs={advanceDelayMs}
      />
    </div>
  );
}
