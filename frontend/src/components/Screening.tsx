/** The parts of the page that only screening (training) units show. */
import { useEffect, useRef } from 'react';
import { turnNumber, type Show } from '../display';
import { MessagePage } from './MessagePage';
import { screeningIntro, selectionText } from '../screening';
import type { CheckResult, ScreeningInfo } from '../types';

/** "Training" section of the overview: how many dialogues and what passing needs. */
export function ScreeningIntro({ info }: { info: ScreeningInfo }) {
  const { count, pass } = screeningIntro(info);
  return (
    <section className="panel training-intro" aria-labelledby="training-intro-title">
      <h3 id="training-intro-title">Training</h3>
      <p>{count}</p>
      <p>
        After each training dialogue, press <strong>Next</strong>: your answers are checked. For each turn you got
        wrong you see your answer, the correct one and why. Correct those turns and check again before you go on.
      </p>
      {pass.map((line) => (
        <p key={line}>{line}</p>
      ))}
      <p>If you pass, the real task follows right away.</p>
    </section>
  );
}

/**
 * The mistakes of the last check of a training dialogue, one card per wrong turn: the worker's
 * answer next to the correct one and the explanation, all as text. `showFor(turn)` gives the
 * display names for a turn (SPEAKER_X is that turn's speaker).
 */
export function CheckFeedback({ result, showFor }: { result: CheckResult; showFor: (turn: number) => Show }) {
  const ref = useRef<HTMLElement>(null);
  // Each new check result brings its feedback into view (the live region announces it).
  useEffect(() => {
    const el = ref.current;
    if (el && typeof el.scrollIntoView === 'function') el.scrollIntoView({ block: 'start' });
  }, [result]);
  if (result.corrected || result.wrong.length === 0) return null;
  const n = result.wrong.length;
  return (
    <section className="feedback" aria-labelledby="feedback-title" ref={ref}>
      <h3 id="feedback-title">{n === 1 ? '1 turn to correct' : `${n} turns to correct`}</h3>
      <p className="small">
        Change your answers for these turns, then press <strong>Check again</strong>.
      </p>
      <ul className="feedback-list">
        {result.wrong.map((w) => {
          const show = showFor(w.turn);
          return (
            <li key={w.turn} className="feedback-item" aria-label={`Turn ${turnNumber(w.turn)}`}>
              <h4>Turn {turnNumber(w.turn)}</h4>
              <div className="feedback-compare">
                <div className="feedback-yours">
                  <span className="feedback-label">Your answer</span>
                  <Selections items={w.yours} empty="Nothing selected" show={show} />
                </div>
                <div className="feedback-correct">
                  <span className="feedback-label">Correct answer</span>
                  <Selections items={w.correct} empty="No selection is correct" show={show} />
                </div>
              </div>
              {w.explanation && (
                <p className="feedback-why">
                  <span className="feedback-label">Why: </span>
                  {show(w.explanation)}
                </p>
              )}
            </li>
          );
        })}
      </ul>
    </section>
  );
}

function Selections({ items, empty, show }: { items: CheckResult['wrong'][number]['yours']; empty: string; show: Show }) {
  if (items.length === 0) return <p className="feedback-value">{empty}</p>;
  return (
    <ul className="feedback-value">
      {items.map((s, i) => (
        <li key={i}>{selectionText(s, show)}</li>
      ))}
    </ul>
  );
}

/** After a passed training: a short state, then the real task on the same link. */
/** The training passed; `message`: a part of it passed, with more to go (arena screening). */
export function ScreeningPassedPage({ onContinue, message = null }: { onContinue: () => void; message?: string | null }) {
  return (
    <MessagePage
      title={message ? 'Passed' : 'Training passed'}
      role="status"
      success
      focusHeading
      action={{ label: message ? 'Continue' : 'Continue to the task', onClick: onContinue }}
    >
      <p>{message || 'Well done: you passed the training. Continue to the task now.'}</p>
    </MessagePage>
  );
}

const NOT_ELIGIBLE_TEXT =
  'Thank you for your interest. Based on the training task, you are not eligible for this task; there is no more work for you here.';

/** A failed training, or a claim refused because the worker is not eligible (403). */
export function NotEligiblePage({ message }: { message: string | null }) {
  return (
    <MessagePage title="Thank you for taking part" role="alert" focusHeading>
      <p>{message || NOT_ELIGIBLE_TEXT}</p>
      <p className="muted">You can close this page now.</p>
    </MessagePage>
  );
}

/** A claim refused because the training is full (503). */
export function TrainingFullPage({ message, onRetry }: { message: string; onRetry: () => void }) {
  return (
    <MessagePage title="Training is full for now" role="alert" focusHeading action={{ label: 'Try again', onClick: onRetry }}>
      <p>{message}</p>
      <p className="muted">Please try again later.</p>
    </MessagePage>
  );
}
