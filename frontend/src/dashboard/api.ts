/**
 * Same-origin calls to the requester API. The requester token is sent once (sign in) and
 * exchanged for an HTTP-only cookie; the CSRF token the server answers is kept in memory only
 * (never in storage or the address) and sent as `X-CSRF-Token` on every request that is not GET.
 */
import { ApiError, NetworkError } from '../api';
import type {
  ArenaResults,
  ActionResult,
  BulkResult,
  Decision,
  DecisionName,
  JudgeSummary,
  Overview,
  ReportStatus,
  Results,
  ReviewPage,
  Session,
  SyncFailures,
  UnitDetail,
  UnitJudge,
  WorkerRow,
} from './types';

export { ApiError, NetworkError };

const BASE = '/api/requester';

export class RequesterClient {
  private csrf: string | null = null;
  /** Called on any 401 (no session, or it ended): the page shows the login form again. */
  onUnauthorized: (message: string) => void = () => undefined;

  get signedIn(): boolean {
    return this.csrf !== null;
  }

  private async call<T>(method: string, path: string, body?: unknown, expect401 = false): Promise<T> {
    const headers: Record<string, string> = { Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    if (method !== 'GET' && method !== 'HEAD' && this.csrf) headers['X-CSRF-Token'] = this.csrf;
    let res: Response;
    try {
      res = await fetch(BASE + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        credentials: 'same-origin',
        cache: 'no-store',
      });
    } catch {
      throw new NetworkError();
    }
    let data: unknown = null;
    try {
      data = await res.json();
    } catch {
      data = null;
    }
    if (!res.ok) {
      const d = (data ?? {}) as { error?: unknown };
      const message = typeof d.error === 'string' && d.error ? d.error : `The server answered ${res.status}.`;
      if (res.status === 401 && !expect401) {
        this.csrf = null;
        this.onUnauthorized(message);
      }
      throw new ApiError(res.status, message);
    }
    return data as T;
  }

  /** The current session (cookie), or null when there is none. */
  async resume(): Promise<Session | null> {
    try {
      const session = await this.call<Session>('GET', '/session', undefined, true);
      this.csrf = session.csrf_token;
      return session;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) return null;
      throw e;
    }
  }

  async signIn(token: string): Promise<Session> {
    const session = await this.call<Session>('POST', '/session', { token }, true);
    this.csrf = session.csrf_token;
    return session;
  }

  async signOut(): Promise<void> {
    try {
      await this.call('DELETE', '/session', undefined, true);
    } finally {
      this.csrf = null;
    }
  }

  overview(): Promise<Overview> {
    return this.call('GET', '/overview');
  }

  workers(): Promise<{ workers: WorkerRow[] }> {
    return this.call('GET', '/workers');
  }

  block(pseudonym: string, reason: string): Promise<ActionResult> {
    return this.call('POST', `/workers/${encodeURIComponent(pseudonym)}/block`, { reason });
  }

  unblock(pseudonym: string): Promise<ActionResult> {
    return this.call('POST', `/workers/${encodeURIComponent(pseudonym)}/unblock`, {});
  }

  grant(pseudonym: string, name: string, value: number): Promise<ActionResult> {
    return this.call('POST', `/workers/${encodeURIComponent(pseudonym)}/qualifications/grant`, { name, value });
  }

  revoke(pseudonym: string, name: string): Promise<ActionResult> {
    return this.call('POST', `/workers/${encodeURIComponent(pseudonym)}/qualifications/revoke`, { name });
  }

  review(query: string): Promise<ReviewPage> {
    return this.call('GET', `/review${query ? `?${query}` : ''}`);
  }

  unit(unitId: string): Promise<UnitDetail> {
    return this.call('GET', `/units/${encodeURIComponent(unitId)}`);
  }

  decide(
    unitId: string,
    decision: DecisionName,
    reason: string,
    rejectionCategory?: string | null,
  ): Promise<Decision & { unit_id: string }> {
    const body: Record<string, unknown> = { decision, reason };
    if (rejectionCategory) body.rejection_category = rejectionCategory;
    return this.call('POST', `/units/${encodeURIComponent(unitId)}/review`, body);
  }

  bulkApprove(unitIds: string[]): Promise<{ results: BulkResult[] }> {
    return this.call('POST', '/units/bulk-review', { unit_ids: unitIds, decision: 'approve', reason: '' });
  }

  bonus(unitId: string, amount: number, reason: string): Promise<ActionResult> {
    return this.call('POST', `/units/${encodeURIComponent(unitId)}/bonus`, { amount, reason });
  }

  syncFailures(): Promise<SyncFailures> {
    return this.call('GET', '/sync-failures');
  }

  retrySync(): Promise<SyncFailures> {
    return this.call('POST', '/sync-failures/retry', {});
  }

  resolveBonus(id: number, paid: boolean): Promise<ActionResult> {
    return this.call('POST', `/bonuses/${id}/resolve`, { paid });
  }

  reportStatus(): Promise<ReportStatus> {
    return this.call('GET', '/report/status');
  }

  results(): Promise<Results> {
    return this.call('GET', '/results');
  }

  arena(): Promise<ArenaResults> {
    return this.call('GET', '/arena');
  }

  judges(): Promise<{ judges: JudgeSummary[] }> {
    return this.call('GET', '/judges');
  }

  unitJudges(unitId: string): Promise<{ unit_id: string; judges: UnitJudge[] }> {
    return this.call('GET', `/units/${encodeURIComponent(unitId)}/judges`);
  }
}
