/**
 * Per-step timings, as the original study kept them: every visit of a step (dialogue × bucket) is
 * an interval `[start_ms, end_ms]` (ms since the epoch). They travel in the draft's `position`
 * (so a reload keeps them) and in the submit's `timings.steps` (docs/worker-api.md).
 */
import { useCallback, useEffect, useRef } from 'react';
import type { Step } from './answers';
import { isPlainObject } from './tree';
import type { StepTiming, SubmitTimings } from './types';

function isInterval(v: unknown): v is [number, number] {
  return (
    Array.isArray(v) &&
    v.length === 2 &&
    v.every((t) => typeof t === 'number' && Number.isFinite(t)) &&
    v[1] >= v[0]
  );
}

/** Timings restored from a draft: only steps of this unit and well-formed intervals. */
export function restoreTimings(raw: unknown, steps: Step[]): StepTiming[] {
  if (!Array.isArray(raw)) return [];
  const out: StepTiming[] = [];
  for (const entry of raw) {
    if (!isPlainObject(entry)) continue;
    const { dialogue, bucket, intervals } = entry;
    if (!steps.some((s) => s.dialogueKey === dialogue && s.bucketName === bucket)) continue;
    const valid = Array.isArray(intervals) ? intervals.filter(isInterval) : [];
    if (valid.length === 0) continue;
    out.push({ dialogue: dialogue as string, bucket: bucket as string, intervals: valid.map(([a, b]) => [a, b]) });
  }
  return out;
}

/** A copy of `timings` with one more interval for `step`. */
function addInterval(timings: StepTiming[], step: Step, start: number, end: number): StepTiming[] {
  const interval: [number, number] = [start, Math.max(start, end)];
  const index = timings.findIndex((t) => t.dialogue === step.dialogueKey && t.bucket === step.bucketName);
  if (index === -1) return [...timings, { dialogue: step.dialogueKey, bucket: step.bucketName, intervals: [interval] }];
  return timings.map((t, i) => (i === index ? { ...t, intervals: [...t.intervals, interval] } : t));
}

/**
 * Tracks the visits of the shown step (`null`: the overview, not timed). `snapshot(now)` gives
 * the timings with the current visit counted up to `now`.
 */
export function useStepTimings(current: Step | null, restored: StepTiming[]) {
  const closed = useRef(restored);
  const open = useRef<{ step: Step; start: number } | null>(null);

  useEffect(() => {
    const now = Date.now();
    if (open.current && now > open.current.start) closed.current = addInterval(closed.current, open.current.step, open.current.start, now);
    open.current = current ? { step: current, start: now } : null;
  }, [current]);

  return useCallback((now: number): StepTiming[] => {
    const visit = open.current;
    return visit ? addInterval(closed.current, visit.step, visit.start, now) : closed.current;
  }, []);
}

/** The submit's `timings`: the page's visit from load to submit, with the step visits. */
export function submitTimings(startedAt: Date, submittedAt: Date, steps: StepTiming[]): SubmitTimings {
  return {
    started_at: startedAt.toISOString(),
    submitted_at: submittedAt.toISOString(),
    duration_ms: submittedAt.getTime() - startedAt.getTime(),
    steps,
  };
}
