/** Same-origin calls to the worker API (docs/worker-api.md). No other network access. */
import { toChatEvent, type ChatEvent } from './chat';
import { SseParser } from './sse';
import type { Answers, BucketValue, ChatState, CheckResult, ScreeningOutcome, SubmitTimings, Unit } from './types';

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
  const data = await jsonOf(res);
  if (!res.ok) throw apiError(res.status, data);
  return data as T;
}

async function jsonOf(res: Response): Promise<unknown> {
  try {
    return await res.json();
  } catch {
    return null;
  }
}

/** The error a refusal carries: the server's `{"error": "...", "problems": [...]}`. */
function apiError(status: number, data: unknown): ApiError {
  const d = (data ?? {}) as { error?: unknown; problems?: unknown };
  const message = typeof d.error === 'string' && d.error ? d.error : `The server answered ${status}.`;
  const problems = Array.isArray(d.problems) ? (d.problems as Problem[]) : [];
  return new ApiError(status, message, problems);
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

/** Saves a draft. Chat units add `answers.online` (position → message index → label), of the same shape. */
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
  /** Crowd platforms: where the worker goes next (e.g. Prolific's completion page). */
  redirect_url?: string | null;
  /** MTurk: the form the page posts to finish the assignment. */
  external_submit?: ExternalSubmit | null;
}

export interface ExternalSubmit {
  url: string;
  fields: Record<string, string>;
}

export interface NextUnit {
  /** The link of the worker's next unit, when they may take one now. */
  next_url: string | null;
  reason: string | null;
}

/** Whether the worker may take another unit now (after a submit). */
export function getNext(token: string): Promise<NextUnit> {
  return call<NextUnit>('GET', '/api/next', undefined, token);
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

function chatPath(unitId: string): string {
  return `/api/chat/${encodeURIComponent(unitId)}`;
}

/** Starts the current conversation if it is pending (idempotent); answers the `chat` object. */
export function startChat(unitId: string, token: string): Promise<ChatState> {
  return call<ChatState>('POST', `${chatPath(unitId)}/start`, {}, token);
}

export interface SentMessage {
  index: number;
  sent_at: string;
}

/** The optional `label` of a message or END: the online answer for the latest bot message. */
function withLabel<T extends object>(body: T, label: BucketValue | undefined): T & { label?: BucketValue } {
  return label === undefined ? body : { ...body, label };
}

/**
 * Sends the worker's message, with the label of the latest bot message when there is one; the
 * same `clientMessageId` again never sends twice.
 */
export function sendChatMessage(
  unitId: string,
  token: string,
  text: string,
  clientMessageId: string,
  label?: BucketValue,
): Promise<SentMessage> {
  return call<SentMessage>('POST', `${chatPath(unitId)}/messages`, withLabel({ text, client_message_id: clientMessageId }, label), token);
}

/** Ends the current conversation (once `can_end`), with the latest bot message's label; answers the `chat` object. */
export function endChat(unitId: string, token: string, label?: BucketValue): Promise<ChatState> {
  return call<ChatState>('POST', `${chatPath(unitId)}/end`, withLabel({}, label), token);
}

/** Asks the bot again for the reply that failed with `retry: true`. */
export function retryChat(unitId: string, token: string): Promise<unknown> {
  return call<unknown>('POST', `${chatPath(unitId)}/retry`, {}, token);
}

/** Arena units: the labels of the latest replies, per side (`"0"` Model A, `"1"` Model B). */
export type SideLabels = Record<string, BucketValue>;

function withLabels<T extends object>(body: T, labels: SideLabels): T & { labels?: SideLabels } {
  return Object.keys(labels).length === 0 ? body : { ...body, labels };
}

/** Arena units (docs/arena.md): the worker's message to both sides, with the labels of the replies before it. */
export function sendArenaMessage(unitId: string, token: string, text: string, clientMessageId: string, labels: SideLabels = {}): Promise<SentMessage> {
  return call<SentMessage>('POST', `${chatPath(unitId)}/messages`, withLabels({ text, client_message_id: clientMessageId }, labels), token);
}

/** Arena units: the vote on the replies now shown (`a`, `b`, `tie`, `bothbad`), with their labels; answers the state. */
export function voteArena(unitId: string, token: string, choice: string, labels: SideLabels = {}): Promise<ChatState> {
  return call<ChatState>('POST', `${chatPath(unitId)}/vote`, withLabels({ choice }, labels), token);
}

/** Arena units: asks one side's bot again (`position` 0 is Model A, 1 Model B). */
export function retryArenaSide(unitId: string, token: string, position: number): Promise<unknown> {
  return call<unknown>('POST', `${chatPath(unitId)}/retry`, { position }, token);
}

/** A stream that stays silent this long is taken for dead (the server comments every 15 s). */
const SILENT_STREAM_MS = 45_000;

/**
 * Reads `GET /api/chat/<unit_id>/events` until the stream ends (resolves), breaks
 * (`NetworkError`) or is refused (`ApiError` with the server's message). Read with `fetch`,
 * not `EventSource`, because the token goes in a header. Aborting `signal` ends it quietly.
 */
export async function readChatEvents(
  unitId: string,
  token: string,
  signal: AbortSignal,
  onEvent: (event: ChatEvent) => void,
  silentMs = SILENT_STREAM_MS,
): Promise<void> {
  const connection = new AbortController();
  const abort = () => connection.abort();
  signal.addEventListener('abort', abort);
  let silence = window.setTimeout(abort, silentMs);
  try {
    let res: Response;
    try {
      res = await fetch(`${chatPath(unitId)}/events`, {
        method: 'GET',
        headers: { Accept: 'text/event-stream', Authorization: `Bearer ${token}` },
        credentials: 'same-origin',
        cache: 'no-store',
        signal: connection.signal,
      });
    } catch {
      if (signal.aborted) return;
      throw new NetworkError();
    }
    if (!res.ok) throw apiError(res.status, await jsonOf(res));
    if (!res.body) throw new NetworkError('The server sent no event stream.');
    const reader = res.body.getReader();
    const cancel = () => void reader.cancel().catch(() => undefined);
    if (connection.signal.aborted) cancel();
    else connection.signal.addEventListener('abort', cancel);
    const decoder = new TextDecoder();
    const parser = new SseParser();
    for (;;) {
      let chunk: ReadableStreamReadResult<Uint8Array> | null;
      try {
        chunk = await reader.read();
      } catch {
        chunk = null;
      }
      if (signal.aborted) return;
      if (chunk === null || connection.signal.aborted) throw new NetworkError('The connection to the server was lost.');
      if (chunk.done) return;
      window.clearTimeout(silence);
      silence = window.setTimeout(abort, silentMs);
      for (const sse of parser.push(decoder.decode(chunk.value, { stream: true }))) {
        const event = toChatEvent(sse);
        if (event && !signal.aborted) onEvent(event);
      }
    }
  } finally {
    window.clearTimeout(silence);
    signal.removeEventListener('abort', abort);
  }
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

/** The message of a failed call. */
export function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
