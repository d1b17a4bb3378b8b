import { useCallback, useEffect, useRef, useState } from 'react';
import { ApiError, saveDraft } from './api';
import type { Answers } from './types';

export type SaveStatus = 'idle' | 'saving' | 'saved' | 'error';

export interface DraftSaverOptions {
  unitId: string;
  token: string;
  answers: Answers;
  position: { step: number };
  /** False once the unit is submitted: nothing more is saved. */
  enabled: boolean;
  /**
   * Completes the position just before it is sent (e.g. with the time spent so far). Changes it
   * makes alone do not cause a save; a save when the page is hidden always sends it.
   */
  stamp?: (position: { step: number }) => unknown;
  debounceMs?: number;
  retryMs?: number;
}

/**
 * Saves the worker's answers and position to the server as they go: debounced after an answer
 * changes, at once when the position (the step) changes, and when the page is hidden or closed. Only one request
 * is in flight; changes made meanwhile are sent right after it.
 */
export function useDraftSaver({
  unitId,
  token,
  answers,
  position,
  enabled,
  stamp,
  debounceMs = 800,
  retryMs = 5000,
}: DraftSaverOptions) {
  const [status, setStatus] = useState<SaveStatus>('idle');
  const [error, setError] = useState<string | null>(null);
  const [retrying, setRetrying] = useState(false);
  const latest = useRef({ answers, position });
  latest.current = { answers, position };
  const lastSent = useRef<string>(JSON.stringify({ answers, position }));
  const inFlight = useRef(false);
  const again = useRef(false);
  const timer = useRef<number | undefined>(undefined);
  const stampRef = useRef(stamp);
  stampRef.current = stamp;
  const enabledRef = useRef(enabled);
  enabledRef.current = enabled;
  const mounted = useRef(true);

  const send = useCallback(
    async (keepalive = false): Promise<void> => {
      window.clearTimeout(timer.current);
      if (!enabledRef.current) return;
      const body = latest.current;
      const json = JSON.stringify(body);
      if (json === lastSent.current && !keepalive) return;
      if (inFlight.current) {
        again.current = true;
        return;
      }
      inFlight.current = true;
      if (mounted.current) setStatus('saving');
      try {
        const position = stampRef.current ? stampRef.current(body.position) : body.position;
        await saveDraft(unitId, token, body.answers, position, keepalive);
        lastSent.current = json;
        if (mounted.current) {
          setStatus('saved');
          setError(null);
        }
      } catch (e) {
        const retryable = !(e instanceof ApiError) || e.status >= 500 || e.status === 429;
        if (mounted.current) {
          setStatus('error');
          setError(e instanceof Error ? e.message : String(e));
          setRetrying(retryable);
          if (retryable) timer.current = window.setTimeout(() => void send(), retryMs);
        }
      } finally {
        inFlight.current = false;
        if (again.current) {
          again.current = false;
          void send();
        }
      }
    },
    [unitId, token, retryMs],
  );

  const answersJson = JSON.stringify(answers);
  useEffect(() => {
    if (!enabled) return;
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => void send(), debounceMs);
    return () => window.clearTimeout(timer.current);
  }, [answersJson, enabled, debounceMs, send]);

  const positionJson = JSON.stringify(position);
  useEffect(() => {
    if (enabled) void send();
  }, [positionJson, enabled, send]);

  useEffect(() => {
    mounted.current = true;
    const onHide = () => {
      if (document.visibilityState === 'hidden') void send(true);
    };
    const onPageHide = () => void send(true);
    document.addEventListener('visibilitychange', onHide);
    window.addEventListener('pagehide', onPageHide);
    return () => {
      mounted.current = false;
      document.removeEventListener('visibilitychange', onHide);
      window.removeEventListener('pagehide', onPageHide);
      window.clearTimeout(timer.current);
    };
  }, [send]);

  return { status, error, retrying, flush: send };
}
