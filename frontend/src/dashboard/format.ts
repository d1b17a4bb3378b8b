/** Display helpers of the dashboard (numbers, times, labels). */

/** "95 s", "3 min 12 s", "1 h 5 min"; "–" when unknown. */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds)) return '–';
  const s = Math.round(seconds);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${s % 60} s`;
  return `${Math.floor(s / 3600)} h ${Math.floor((s % 3600) / 60)} min`;
}

/** 0.714 → "71%"; "–" when unknown. */
export function formatRate(rate: number | null | undefined): string {
  if (rate === null || rate === undefined || !Number.isFinite(rate)) return '–';
  return `${Math.round(rate * 100)}%`;
}

function pad(n: number): string {
  return String(n).padStart(2, '0');
}

/** Local wall-clock time "hh:mm:ss". */
export function clockTime(date: Date): string {
  return `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

/** An ISO time as local "YYYY-MM-DD hh:mm"; "–" when missing. */
export function formatTime(iso: string | null | undefined): string {
  if (!iso) return '–';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** An ISO time as local "hh:mm" (chart axis). */
export function formatHourMinute(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return `${pad(d.getHours())}:${pad(d.getMinutes())}`;
}

/** "60 s" → "1 minute", 300 → "5 minutes", 3600 → "1 hour". */
export function bucketLabel(seconds: number): string {
  if (seconds % 3600 === 0) {
    const h = seconds / 3600;
    return h === 1 ? '1 hour' : `${h} hours`;
  }
  if (seconds % 60 === 0) {
    const m = seconds / 60;
    return m === 1 ? '1 minute' : `${m} minutes`;
  }
  return `${seconds} seconds`;
}

export const DECISION_LABELS: Record<string, string> = {
  approve: 'Approved',
  reject: 'Rejected',
  soft_reject: 'Soft-rejected',
};

export const SYNC_LABELS: Record<string, string> = {
  sent: 'sent to the platform',
  pending: 'waiting to be sent',
  failed: 'sending failed',
  recorded: 'recorded here (no platform)',
  paid: 'paid',
  uncertain: 'uncertain: check on the platform',
};

/** Unit statuses in the words the progress card uses ("3 done · 1 in progress · 5 waiting"). */
export const UNIT_STATUS_LABELS: Record<string, string> = {
  launched: 'Waiting',
  assigned: 'In progress',
  completed: 'Done',
};

/** A run's number within its task (1 for the first launch), from the overview's runs in order. */
export function runNumber(runs: ReadonlyArray<{ run_id: number }>, runId: number | null): number | null {
  const at = runs.findIndex((r) => r.run_id === runId);
  return at === -1 ? null : at + 1;
}

export const FLAG_LABELS: Record<string, string> = {
  blocked: 'Blocked',
  disqualified: 'Disqualified',
  flagged_work: 'Flagged work',
  unverified: 'Unverified',
};

/** Human text for an identifier such as `soft_rejected` → "Soft rejected". */
export function label(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Prolific's rejection categories (sent with a reject when the provider is Prolific). */
export const PROLIFIC_REJECTION_CATEGORIES: ReadonlyArray<[string, string]> = [
  ['TOO_QUICKLY', 'Too quickly'],
  ['TOO_SLOWLY', 'Too slowly'],
  ['FAILED_INSTRUCTIONS', 'Failed instructions'],
  ['INCOMP_LONGITUDINAL', 'Incomplete longitudinal'],
  ['FAILED_CHECK', 'Failed attention check'],
  ['LOW_EFFORT', 'Low effort'],
  ['MALINGERING', 'Malingering'],
  ['NO_CODE', 'No completion code'],
  ['BAD_CODE', 'Bad completion code'],
  ['NO_DATA', 'No data'],
  ['UNSUPP_DEVICE', 'Unsupported device'],
  ['OTHER', 'Other'],
];
