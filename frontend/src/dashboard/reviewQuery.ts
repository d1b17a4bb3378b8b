/** The review list's filters and the query string they make (`GET /api/requester/review`). */

export interface ReviewFilters {
  worker: string;
  status: string;
  decision: string;
  bucket: string;
  flag: string;
  pool: string;
}

export const EMPTY_FILTERS: ReviewFilters = { worker: '', status: '', decision: '', bucket: '', flag: '', pool: '' };

export const PAGE_SIZE = 50;

export const STATUS_OPTIONS = ['completed', 'accepted', 'rejected', 'soft_rejected', 'returned'];
export const DECISION_OPTIONS = ['none', 'approve', 'reject', 'soft_reject'];
export const FLAG_OPTIONS = ['flagged', 'unverified'];
export const POOL_OPTIONS = ['main', 'screening', 'gold'];

/** Only the filters that are set, in a fixed order, then `offset` and `limit`. */
export function reviewQuery(filters: ReviewFilters, offset = 0, limit = PAGE_SIZE): string {
  const q = new URLSearchParams();
  for (const key of ['worker', 'status', 'decision', 'bucket', 'flag', 'pool'] as const) {
    const value = filters[key].trim();
    if (value) q.set(key, value);
  }
  q.set('offset', String(Math.max(0, offset)));
  q.set('limit', String(limit));
  return q.toString();
}
