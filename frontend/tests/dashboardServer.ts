/** A fake requester API for the dashboard tests: records every request, answers from routes. */
import { vi } from 'vitest';

export interface Recorded {
  method: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
}

type Handler = (req: Recorded) => [number, unknown] | undefined;

export const CSRF = 'csrf-abc123';

export const OVERVIEW = {
  task: 'demo',
  current_run: 1,
  state: 'running',
  provider: 'local',
  server_time: '2026-01-01T10:00:00Z',
  progress: { total: 8, done: 2, in_progress: 1, waiting: 5 },
  runs: [{ run_id: 1, status: 'running', started_at: '2026-01-01T09:00:00Z', units: { launched: 5, assigned: 1, completed: 2 } }],
  throughput: {
    bucket_seconds: 60,
    points: [
      { t: '2026-01-01T09:58:00Z', submissions: 1 },
      { t: '2026-01-01T09:59:00Z', submissions: 0 },
      { t: '2026-01-01T10:00:00Z', submissions: 1 },
    ],
  },
  time_per_unit: { count: 2, median_s: 95.2, p90_s: 180 },
  screening: { passed: 0, failed: 0, pass_rate: null },
  gold: { passed: 9, failed: 1, pass_rate: 0.9 },
  live_chats: 0,
  quotas: [],
  sync_failures: { reviews: 0, bonuses: 0 },
};

export const REVIEW_ITEM = {
  unit_id: 'u_1',
  worker: 'w_aa',
  pool: 'main',
  kind: 'static',
  status: 'completed',
  submitted_at: '2026-01-01T10:00:00Z',
  duration_s: 95,
  decision: null,
  flagged: false,
  verified: true,
  buckets: ['overall'],
  bots: [],
};

export const UNIT = {
  ...REVIEW_ITEM,
  bonuses: [],
  payload: {
    unit_id: 'u_1',
    kind: 'annotation',
    speaker_names: { system: 'Bot', user: 'Partner' },
    dialogues: [
      {
        key: 'd1',
        turns: [
          { index: 0, speaker: 'user', text: 'Hello <img src=x onerror=alert(1)>' },
          { index: 1, speaker: 'system', text: 'Hi there!' },
        ],
        turns2: null,
        persona: null,
        annotation_tasks: ['labels', 'overall'],
      },
    ],
    buckets: {
      labels: { config: 'multiselect', level: 'turn', task_title: 'Labels', options: [], targets: { d1: [1] } },
      overall: { config: 'likert-5-dialogue', level: 'dialogue', task_title: 'Overall', options: [], targets: {} },
    },
  },
  answers: { d1: { labels: { '1': ['greets'] }, overall: { dialogue: { 'How good?': 4 } } } },
  timings: {},
  conversations: [],
};

export const RESULTS = {
  questions: [{ bucket: 'overall', question: 'q1', text: 'How good was it?', n: 6, answers: { '1': 1, '4': 3, '5': 2 } }],
  downloads: [
    { label: 'Submissions (JSONL)', url: '/api/requester/submissions?format=jsonl' },
    { label: 'Items (CSV)', url: '/api/requester/submissions?format=csv' },
  ],
};

/**
 * Installs a fake `fetch`. `signedIn` decides the first `GET /session`. Extra `handlers` run
 * first (return undefined to fall through to the defaults).
 */
export function fakeServer(opts: { signedIn?: boolean; provider?: string; handlers?: Handler[] } = {}) {
  const requests: Recorded[] = [];
  const state = { signedIn: opts.signedIn ?? false };
  const defaults: Handler = (req) => {
    const path = req.url.split('?')[0];
    if (path === '/api/requester/session') {
      if (req.method === 'POST') {
        const token = (req.body as { token?: string } | null)?.token;
        if (token !== 'good-token') return [401, { error: 'wrong token' }];
        state.signedIn = true;
        return [200, { task: 'demo', csrf_token: CSRF }];
      }
      if (!state.signedIn) return [401, { error: 'not signed in' }];
      if (req.method === 'DELETE') {
        state.signedIn = false;
        return [200, { ok: true }];
      }
      return [200, { task: 'demo', csrf_token: CSRF }];
    }
    if (!state.signedIn) return [401, { error: 'the session ended' }];
    if (req.method !== 'GET' && req.headers['x-csrf-token'] !== CSRF) return [403, { error: 'bad csrf' }];
    if (path === '/api/requester/overview') return [200, { ...OVERVIEW, provider: opts.provider ?? 'local' }];
    if (path === '/api/requester/workers') return [200, { workers: [] }];
    if (path === '/api/requester/review') return [200, { total: 1, offset: 0, limit: 50, buckets: ['overall', 'labels'], items: [REVIEW_ITEM] }];
    if (path === '/api/requester/units/u_1') return [200, UNIT];
    if (path === '/api/requester/units/u_1/review') return [200, { unit_id: 'u_1', ...(req.body as object), sync_state: 'recorded', last_error: null, decided_at: null }];
    if (path === '/api/requester/results') return [200, RESULTS];
    return [404, { error: `no route ${path}` }];
  };
  const handlers = [...(opts.handlers ?? []), defaults];
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init: RequestInit = {}) => {
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries((init.headers ?? {}) as Record<string, string>)) headers[k.toLowerCase()] = v;
    const req: Recorded = {
      method: init.method ?? 'GET',
      url: String(input),
      headers,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : null,
    };
    requests.push(req);
    let answer: [number, unknown] | undefined;
    for (const h of handlers) {
      answer = h(req);
      if (answer) break;
    }
    const [status, body] = answer!;
    return new Response(JSON.stringify(body), { status, headers: { 'Content-Type': 'application/json' } });
  });
  vi.stubGlobal('fetch', fetchMock);
  return { requests, state, fetchMock };
}
