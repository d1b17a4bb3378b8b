import { useCallback, useEffect, useMemo, useRef, useState } from 'react';
import { getValue, setValue, type Step } from '../answers';
import { explanationOf, setExplanation } from '../explain';
import type { DepContext } from '../dependencies';
import { bucketTitle, makeShows, speakerNames, turnNumber, type Show } from '../display';
import { settleStep, targetsOf, turnContext } from '../context';
import { checkboxesSeen } from '../seen';
import type { Answers, Bucket, BucketValue, Dialogue, Turn, Unit } from '../types';
import { DIALOGUE_TARGET } from '../types';
import { isTreeBucket, isValueComplete, valueGaps } from '../values';
import { DialogueView } from './DialogueView';
import { ComparativeQuestion, ForeachQuestions, LikertQuestions } from './Renderers';
import type { HelpLink } from './TreeQuestions';
import { ExplainField, TextAnswer } from './TextAnswer';
import { TurnAnswers } from './TurnAnswers';
import { stackedSides, useStacked } from '../stacked';

export type Update = (fn: (answers: Answers) => Answers) => void;

export interface StepViewProps {
  unit: Unit;
  step: Step;
  answers: Answers;
  update: Update;
  /** Texts about the whole dialogue (`SPEAKER_X` = the bot); turn texts use their turn's names. */
  show: Show;
  /** Opens the instructions of the step's bucket; null when the bucket has none. */
  help: HelpLink | null;
  /** Delay before moving on to the next target turn after one is completed by a click. */
  advanceDelayMs?: number;
}

/** The answer area of one step: the dialogue(s) plus the bucket's questions. */
export function StepView(props: StepViewProps) {
  const { unit, step } = props;
  const bucket = unit.buckets[step.bucketName];
  const dialogue = unit.dialogues.find((d) => d.key === step.dialogueKey);
  if (!bucket || !dialogue) return <p className="error-text">This step cannot be shown.</p>;
  if (bucket.config === 'comparative') return <ComparativeStep {...props} bucket={bucket} dialogue={dialogue} />;
  if (bucket.level === 'dialogue') return <DialogueLevelStep {...props} bucket={bucket} dialogue={dialogue} />;
  return <TurnLevelStep {...props} bucket={bucket} dialogue={dialogue} />;
}

interface InnerProps extends StepViewProps {
  bucket: Bucket;
  dialogue: Dialogue;
}

function useTargetSetter(props: InnerProps) {
  const { update, step, bucket, dialogue } = props;
  return useCallback(
    (target: string, fn: (old: unknown) => BucketValue | undefined) =>
      update((a) => {
        const old = getValue(a, step.dialogueKey, step.bucketName, target);
        const next = fn(old);
        return next === old ? a : settleStep(setValue(a, step.dialogueKey, step.bucketName, target, next), bucket, dialogue, step.bucketName);
      }),
    [update, step.dialogueKey, step.bucketName, bucket, dialogue],
  );
}

/** The step's "Explain your answer" field for one target, when its bucket asks for one. */
function Explanation({ update, step, bucket, answers, target }: InnerProps & { target: string }) {
  if (!bucket.explain) return null;
  return (
    <ExplainField
      limits={bucket.explain}
      value={explanationOf(answers[step.dialogueKey]?.[step.bucketName], target)}
      onChange={(text) => update((a) => setExplanation(a, step.dialogueKey, step.bucketName, target, text))}
    />
  );
}

function turnStatus(bucket: Bucket, value: unknown, ctx: DepContext): string {
  if (value === undefined) return 'Not answered yet';
  const gaps = valueGaps(bucket, value, ctx);
  if (gaps.length === 0) return 'Answered';
  return 'Partly answered';
}

function TurnLevelStep(props: InnerProps) {
  const { bucket, dialogue, answers, show, help, step, advanceDelayMs = 250 } = props;
  const setTarget = useTargetSetter(props);
  const targets = useMemo(() => targetsOf(bucket, dialogue.key), [bucket, dialogue.key]);
  const targetSet = useMemo(() => new Set(targets), [targets]);
  const accordion = isTreeBucket(bucket);
  const bucketAnswers = answers[dialogue.key]?.[step.bucketName] ?? {};
  const latest = useRef(bucketAnswers);
  latest.current = bucketAnswers;
  const names = useMemo(() => speakerNames(props.unit.speaker_names), [props.unit]);
  const showTurn = useMemo(() => makeShows(names), [names]);
  // Checkbox questions whose "None of these" the worker confirmed, per turn (see seen.ts).
  const [confirmedNone, setConfirmedNone] = useState<Record<number, ReadonlySet<string>>>({});
  const noneSet = (index: number): ReadonlySet<string> => confirmedNone[index] ?? new Set<string>();
  const isComplete = useCallback(
    (index: number, values: Record<string, unknown>) =>
      isValueComplete(bucket, values[String(index)], turnContext(dialogue, index, bucket, values)),
    [bucket, dialogue],
  );

  const [current, setCurrent] = useState<number | null>(() => {
    const firstOpen = targets.find((i) => !isComplete(i, bucketAnswers));
    return firstOpen ?? targets[0] ?? null;
  });

  // Focus handling when moving between target turns.
  const groupRefs = useRef(new Map<number, HTMLDivElement>());
  const [focusTurn, setFocusTurn] = useState<number | null>(null);
  useEffect(() => {
    if (focusTurn === null) return;
    const el = groupRefs.current.get(focusTurn);
    if (el) {
      el.focus({ preventScroll: true });
      if (typeof el.scrollIntoView === 'function') el.scrollIntoView({ block: 'nearest', behavior: 'smooth' });
    }
    setFocusTurn(null);
  }, [focusTurn, current]);

  const openTurn = (index: number, focus: boolean) => {
    setCurrent(index);
    if (focus) setFocusTurn(index);
  };

  const nextTarget = (index: number): number | null => {
    const pos = targets.indexOf(index);
    return pos >= 0 && pos + 1 < targets.length ? targets[pos + 1] : null;
  };

  // A mouse click that completes a turn, every question of it seen (checkbox questions ticked
  // or confirmed "None of these"), moves on to the next unfinished target turn. A checkbox tick
  // never does (more ticks may follow). Keyboard users (arrow keys change radios) stay where
  // they are and use "Go to turn N".
  const pointerRef = useRef(false);
  const advanceTimer = useRef<number | undefined>(undefined);
  useEffect(() => () => window.clearTimeout(advanceTimer.current), []);
  const maybeAdvance = (
    index: number,
    before: unknown,
    after: unknown,
    noneBefore: ReadonlySet<string>,
    noneAfter: ReadonlySet<string>,
  ) => {
    if (!pointerRef.current) return;
    const ctx = turnContext(dialogue, index, bucket, latest.current);
    const done = (v: unknown, none: ReadonlySet<string>) =>
      isValueComplete(bucket, v, ctx) && checkboxesSeen(bucket.options, v, ctx, none);
    if (done(before, noneBefore) || !done(after, noneAfter)) return;
    const values = { ...latest.current, [String(index)]: after };
    const pos = targets.indexOf(index);
    const rest = [...targets.slice(pos + 1), ...targets.slice(0, Math.max(pos, 0))];
    const next = rest.find((i) => !isComplete(i, values));
    if (next === undefined) return;
    window.clearTimeout(advanceTimer.current);
    advanceTimer.current = window.setTimeout(() => openTurn(next, true), advanceDelayMs);
  };

  const renderAnswers = (turn: Turn) => {
    const index = turn.index;
    const ctx = turnContext(dialogue, index, bucket, bucketAnswers);
    const key = String(index);
    const value = bucketAnswers[key];
    const n = turnNumber(index);
    const groupProps = {
      ref: (el: HTMLDivElement | null) => {
        if (el) groupRefs.current.set(index, el);
        else groupRefs.current.delete(index);
      },
      role: 'group',
      'aria-label': `Turn ${n}`,
      'data-turn-index': index,
      tabIndex: -1,
    } as const;

    if (accordion && index !== current) {
      const status = turnStatus(bucket, value, ctx);
      return (
        <div {...groupProps} className="answers is-collapsed">
          <span className={status === 'Answered' ? 'status is-done' : 'status'}>{status}</span>
          <button type="button" className="btn btn-small" onClick={() => openTurn(index, true)}>
            {status === 'Answered' ? `Change turn ${n}` : `Answer turn ${n}`}
          </button>
        </div>
      );
    }

    const next = accordion ? nextTarget(index) : null;
    return (
      <div {...groupProps} className="answers">
        <TurnAnswers
          bucket={bucket}
          turn={ctx}
          value={value}
          show={showTurn(turn.speaker)}
          help={help}
          setValue={(fn) => setTarget(key, fn)}
          none={noneSet(index)}
          setNone={(none) => setConfirmedNone((c) => ({ ...c, [index]: none }))}
          onTreeClick={(before, after, noneBefore, noneAfter) => maybeAdvance(index, before, after, noneBefore, noneAfter)}
        />
        <Explanation {...props} target={key} />
        {next !== null && (
          <div className="turn-nav">
            <button type="button" className="btn btn-small" onClick={() => openTurn(next, true)}>
              Go to turn {turnNumber(next)}
            </button>
          </div>
        )}
      </div>
    );
  };

  return (
    <div
      className="step-body"
      onPointerDownCapture={() => {
        pointerRef.current = true;
      }}
      onKeyDownCapture={() => {
        pointerRef.current = false;
      }}
    >
      {targets.length === 0 && <p className="note">There is nothing to annotate in this dialogue for this task.</p>}
      <DialogueView
        dialogueKey={dialogue.key}
        turns={dialogue.turns}
        persona={dialogue.persona}
        names={names}
        show={show}
        targets={targetSet}
        current={accordion ? current : null}
        renderAnswers={renderAnswers}
        onTurnClick={accordion ? (i) => openTurn(i, true) : undefined}
      />
    </div>
  );
}

function DialogueLevelStep(props: InnerProps) {
  const { bucket, dialogue, answers, show, step } = props;
  const setTarget = useTargetSetter(props);
  const value = answers[dialogue.key]?.[step.bucketName]?.[DIALOGUE_TARGET];
  const onChange = (v: Record<string, number>) => setTarget(DIALOGUE_TARGET, () => v);
  const names = useMemo(() => speakerNames(props.unit.speaker_names), [props.unit]);
  const ratings = value as Record<string, number> | undefined;
  return (
    <div className="step-body split">
      <DialogueView
        dialogueKey={dialogue.key}
        turns={dialogue.turns}
        persona={dialogue.persona}
        names={names}
        show={show}
      />
      <section className="panel questions-panel" aria-label="Questions about the dialogue">
        {bucket.text ? (
          <TextAnswer
            label={show(bucket.question ?? '')}
            limits={bucket.text}
            value={typeof value === 'string' ? value : ''}
            onChange={(v) => setTarget(DIALOGUE_TARGET, () => (v === '' ? undefined : v))}
          />
        ) : bucket.config === 'likert-5-dialogue' ? (
          <LikertQuestions bucket={bucket} value={ratings} onChange={onChange} show={show} />
        ) : (
          <ForeachQuestions bucket={bucket} value={ratings} onChange={onChange} show={show} />
        )}
        <Explanation {...props} target={DIALOGUE_TARGET} />
      </section>
    </div>
  );
}

function ComparativeStep(props: InnerProps) {
  const { bucket, dialogue, answers, show, step } = props;
  const setTarget = useTargetSetter(props);
  const value = answers[dialogue.key]?.[step.bucketName]?.[DIALOGUE_TARGET];
  const names = useMemo(() => speakerNames(props.unit.speaker_names), [props.unit]);
  const stacked = useStacked();
  const showSide = stacked ? (text: string) => stackedSides(show(text)) : show;
  // The question first, sticky under the top bar: it stays in view however long the dialogues.
  return (
    <div className="step-body">
      <section className="panel compare-question" aria-label="Comparison question">
        <ComparativeQuestion
          bucket={bucket}
          value={typeof value === 'string' ? value : undefined}
          onChange={(v) => setTarget(DIALOGUE_TARGET, () => v)}
          show={showSide}
        />
        <Explanation {...props} target={DIALOGUE_TARGET} />
      </section>
      <div className="compare">
        <DialogueView dialogueKey={dialogue.key} side={1} title="Dialogue 1" turns={dialogue.turns} persona={dialogue.persona} names={names} show={show} />
        <DialogueView dialogueKey={dialogue.key} side={2} title="Dialogue 2" turns={dialogue.turns2 ?? []} names={names} show={show} />
      </div>
    </div>
  );
}

export function stepTitle(unit: Unit, step: Step): string {
  const bucket = unit.buckets[step.bucketName];
  return bucketTitle(bucket?.task_title || step.bucketName);
}
