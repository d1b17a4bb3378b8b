import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, messageOf, newClientId, submit } from './api';
import { answersForSubmit } from './answers';
import { endedDialogues } from './chatAnnotations';
import type { SubmitError } from './components/AnnotationSteps';
import { followCompletion } from './platform';
import { submitTimings } from './timings';
import type { ChatState, ScreeningOutcome } from './types';
import type { useChatAnnotations } from './useChatAnnotations';

interface Options {
  unitId: string;
  token: string;
  chat: ChatState;
  ann: Pick<ReturnType<typeof useChatAnnotations>, 'answers' | 'timingsAt' | 'review'>;
  /** The unit's "being submitted" state (it also stops the drafts). */
  setSubmitting: (submitting: boolean) => void;
  /** Submitted once, by itself, when this turns true. */
  ready: boolean;
  onCompleted: (completionCode: string | null, screening?: ScreeningOutcome) => void;
}

/**
 * A chat's or a battle's submit with its offline answers, made once when `ready` (and again by
 * hand after a failure): a refused answer sends the worker back to the step that holds it.
 */
export function useChatSubmit({ unitId, token, chat, ann, setSubmitting, ready, onCompleted }: Options) {
  const [submitError, setSubmitError] = useState<SubmitError | null>(null);
  const submitId = useRef(newClientId());
  const loadedAt = useRef(new Date());
  const submitted = useRef(false);
  const { answers, timingsAt, review } = ann;
  const submitUnit = useCallback(async () => {
    setSubmitError(null);
    setSubmitting(true);
    const submittedAt = new Date();
    try {
      const result = await submit(
        unitId,
        token,
        answersForSubmit(answers),
        submitTimings(loadedAt.current, submittedAt, timingsAt(submittedAt.getTime())),
        submitId.current,
      );
      onCompleted(result?.completion_code ?? null, result?.screening);
      followCompletion(result);
    } catch (e) {
      const problems = e instanceof ApiError ? e.problems : [];
      setSubmitError({ message: messageOf(e), problems });
      // The offline answers were refused: the worker fixes them in the annotation steps.
      if (e instanceof ApiError && e.status === 422 && endedDialogues(chat).length > 0) review(problems[0]);
    } finally {
      setSubmitting(false);
    }
  }, [unitId, token, onCompleted, answers, timingsAt, review, chat, setSubmitting]);
  useEffect(() => {
    if (!ready || submitted.current) return;
    submitted.current = true;
    void submitUnit();
  }, [ready, submitUnit]);
  return { submitError, submitUnit };
}
