import { useCallback, useEffect, useRef, useState } from 'react';

export const POLL_MS = 5000;

export interface Polled<T> {
  data: T | null;
  error: string | null;
  /** Load now (after an action); the next poll is counted from here. */
  refresh: () => Promise<void>;
}

/**
 * Loads `load()` now and every `intervalMs` while the tab is visible: no request is made while
 * `document.hidden`, and the view loads at once when the tab comes back. `key` changes reload
 * at once (e.g. new filters). `onLoaded` gets the time of each successful load.
 */
export function usePoll<T>(
  load: () => Promise<T>,
  key: string,
  onLoaded?: (at: Date) => void,
  intervalMs = POLL_MS,
): Polled<T> {
  const [data, setData] = useState<T | null>(null);
  const [error, setError] = useState<string | null>(null);
  const loadRef = useRef(load);
  loadRef.current = load;
  const loadedRef = useRef(onLoaded);
  loadedRef.current = onLoaded;
  const timer = useRef<number | undefined>(undefined);
  const alive = useRef(true);
  const generation = useRef(0);

  const schedule = useRef<() => void>(() => undefined);

  const run = useCallback(async () => {
    window.clearTimeout(timer.current);
    const mine = ++generation.current;
    try {
      const value = await loadRef.current();
      if (!alive.current || mine !== generation.current) return;
      setData(value);
      setError(null);
      loadedRef.current?.(new Date());
    } catch (e) {
      if (!alive.current || mine !== generation.current) return;
      setError(e instanceof Error ? e.message : String(e));
    } finally {
      if (alive.current && mine === generation.current) schedule.current();
    }
  }, []);

  schedule.current = () => {
    window.clearTimeout(timer.current);
    timer.current = window.setTimeout(() => {
      if (document.hidden) return; // paused; `visibilitychange` starts it again
      void run();
    }, intervalMs);
  };

  useEffect(() => {
    alive.current = true;
    void run();
    const onVisible = () => {
      if (!document.hidden) void run();
      else window.clearTimeout(timer.current);
    };
    document.addEventListener('visibilitychange', onVisible);
    return () => {
      alive.current = false;
      generation.current++;
      window.clearTimeout(timer.current);
      document.removeEventListener('visibilitychange', onVisible);
    };
  }, [key, run]);

  return { data, error, refresh: run };
}
