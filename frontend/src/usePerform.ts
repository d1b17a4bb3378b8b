import { useState } from 'react';
import { messageOf } from './api';

/** A page action's state: `perform` runs one request at a time, marks the page busy while it
 * runs and shows what failed as "<failure>: <the server's reason>". */
export function usePerform() {
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const perform = async (request: () => Promise<void>, failure: string) => {
    setBusy(true);
    setProblem(null);
    try {
      await request();
    } catch (e) {
      setProblem(`${failure}: ${messageOf(e)}`);
    } finally {
      setBusy(false);
    }
  };
  return { busy, problem, setProblem, perform };
}
