/** Same-origin calls to the worker API (docs/worker-api.md). No other network access. */
import type { Answers, CheckResult, ScreeningOutcome, SubmitTimings, Unit } from './types';

export interface Problem {
  dialogue?: string;
  bucket?: string;
  turn?: number | null;
  question?: string | null;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;
  readonly problems: Problem[];
  constructor(status: number, message: string, problems: Problem[] = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.problems = problems;
  }
}

/** Thrown when the server could not be reached at all. */
export class NetworkError extends Error {
  constructor(message = 'The server could not be reached. Check your connection and try again.') {
    super(message);
    this.name = 'NetworkError';
  }
}

async function call<T>(
  method: string,
  path: string,
  body?: unknown,
  token?: string,
  init: RequestInit = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  let res: Response;
  try {
    res = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
      ...init,
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
    const d = (data ?? {}) as { error?: unknown; problems?: unknown };
    const message = typeof d.error === 'string' && d.error ? d.error : `The server answered ${res.status}.`;
    const problems = Array.isArray(d.problems) ? (d.problems as Problem[]) : [];
    throw new ApiError(res.status, message, problems);
  }
  return data as T;
}

export interface ClaimResult {
  token: string;
  unit_id: string;
  status: 'assigned' | 'completed' | string;
}

export function claim(workerId: string, assignmentId: string, sig: string | null): Promise<ClaimResult> {
  return call<ClaimResult>('POST', '/api/claim', { worker_id: workerId, assignment_id: assignmentId, sig });
}

function unitPath(unitId: string): string {
  return `/api/units/${encodeURIComponent(unitId)}`;
}

export function getUnit(unitId: string, token: string): Promise<Unit> {
  return call<Unit>('GET', unitPath(unitId), undefined, token);
}

export function saveDraft(
  unitId: string,
  token: string,
  answers: Answers,
  position: unknown,
  keepalive = false,
): Promise<{ saved_at: string }> {
  return call('PUT', `${unitPath(unitId)}/draft`, { answers, position }, token, keepalive ? { keepalive } : {});
}

export interface SubmitResult {
  status: 'completed';
  completion_code: string | null;
  /** Screening units only: whether the worker passed the training. */
  screening?: ScreeningOutcome;
}

/** Check one training dialogue of a screening unit: the server scores it and names the mistakes. */
export function checkDialogue(
  unitId: string,
  token: string,
  dialogueKey: string,
  answers: Answers[string],
): Promise<CheckResult> {
  return call<CheckResult>(
    'POST',
    `${unitPath(unitId)}/dialogues/${encodeURIComponent(dialogueKey)}/check`,
    { answers },
    token,
  );
}

export function submit(
  unitId: string,
  token: string,
  answers: Answers,
  timings: SubmitTimings,
  clientId: string,
): Promise<SubmitResult> {
  return call<SubmitResult>('POST', `${unitPath(unitId)}/submit`, { answers, timings, client_id: clientId }, token);
}

/** A random UUID v4. `crypto.randomUUID` needs a secure context; worker links may be plain http. */
export function newClientId(): string {
  const c = globalThis.crypto;
  if (c && typeof c.randomUUID === 'function' && globalThis.isSecureContext !== false) {
    try {
      return c.randomUUID();
    } catch {
      /* fall through */
    }
  }
  const bytes = new Uint8Array(16);
  if (c && typeof c.getRandomValues === 'function') c.getRandomValues(bytes);
  else for (let i = 0; i < 16; i++) bytes[i] = Math.floor(Math.random() * 256);
  bytes[6] = (bytes[6] & 0x0f) | 0x40;
  bytes[8] = (bytes[8] & 0x3f) | 0x80;
  const hex = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
