/**
 * The unit a task link has open in this browser, and until when. A unit whose time ran out goes
 * back to the pool, and the same link then gets a unit afresh (another one, or the same one
 * with its answers gone): remembering the open one lets the page say so instead of swapping the
 * unit silently under a reload.
 */
interface OpenUnit {
  unit: string;
  /** When its time runs out (ms since the epoch), or null without a time limit. */
  deadline: number | null;
}

function key(workerId: string, assignmentId: string): string {
  return `cep-open-unit:${workerId}:${assignmentId}`;
}

function read(workerId: string, assignmentId: string): OpenUnit | null {
  try {
    const saved: unknown = JSON.parse(window.localStorage.getItem(key(workerId, assignmentId)) ?? 'null');
    const ok =
      typeof saved === 'object' && saved !== null && typeof (saved as OpenUnit).unit === 'string';
    return ok ? (saved as OpenUnit) : null;
  } catch {
    return null;
  }
}

/**
 * Remember the unit the link has open now; returns whether it replaces one whose time ran out
 * (another unit, or the same unit assigned afresh).
 */
export function openUnit(workerId: string, assignmentId: string, unitId: string, secondsRemaining: number | null): boolean {
  const now = Date.now();
  const before = read(workerId, assignmentId);
  const replaced = before !== null && (before.unit !== unitId || (before.deadline !== null && now >= before.deadline));
  const kept = before !== null && !replaced ? before.deadline : null;
  const deadline = kept ?? (secondsRemaining === null ? null : now + secondsRemaining * 1000);
  try {
    window.localStorage.setItem(key(workerId, assignmentId), JSON.stringify({ unit: unitId, deadline }));
  } catch {
    /* storage is off: the page cannot tell, and shows the unit the server gives */
  }
  return replaced;
}

/** The link's unit is done with (submitted, or given up when its time ran out). */
export function forgetOpenUnit(workerId: string, assignmentId: string): void {
  try {
    window.localStorage.removeItem(key(workerId, assignmentId));
  } catch {
    /* nothing was stored */
  }
}
