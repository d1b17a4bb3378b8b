import { render } from '@testing-library/react';
import { useCallback, useState } from 'react';
import type { Step } from '../src/answers';
import { StepView } from '../src/components/StepView';
import { showFor, speakerNames } from '../src/display';
import type { Answers, Unit } from '../src/types';

/** Renders one step and exposes the answers it produces. */
export function renderStep(unit: Unit, step: Step, initial: Answers = {}, opts: { onHelp?: () => void } = {}) {
  const box: { answers: Answers } = { answers: initial };
  function Harness() {
    const [answers, setAnswers] = useState<Answers>(initial);
    box.answers = answers;
    const update = useCallback((fn: (a: Answers) => Answers) => setAnswers((a) => fn(a)), []);
    const help = unit.buckets[step.bucketName]?.instructions_html
      ? { dialogId: 'test-dialog', open: opts.onHelp ?? (() => {}) }
      : null;
    return (
      <StepView
        unit={unit}
        step={step}
        answers={answers}
        update={update}
        show={showFor(speakerNames(unit.speaker_names), null)}
        help={help}
        advanceDelayMs={0}
      />
    );
  }
  const result = render(<Harness />);
  return {
    ...result,
    /** The value stored for `target` of the step's bucket. */
    value: (target: string) => box.answers[step.dialogueKey]?.[step.bucketName]?.[target],
    bucketAnswers: () => box.answers[step.dialogueKey]?.[step.bucketName],
    answers: () => box.answers,
  };
}
