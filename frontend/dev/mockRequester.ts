/**
 * Development-only mock of the requester dashboard API (never part of the build). Open
 * http://localhost:5173/dashboard and sign in with the token `dev-requester`. Submissions keep
 * arriving while the page is open, so that polling shows changes.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { makeSampleUnit } from './sampleUnit.ts';

export const DEV_REQUESTER_TOKEN = 'dev-requester';
const COOKIE = 'cep_requester=dev-session';
const CSRF = 'dev-csrf-0123456789abcdef';

type Json = Record<string, unknown>;

interface MockUnit {
  unit_id: string;
  worker: string;
  pool: 'main' | 'screening' | 'gold';
  kind: 'static' | 'chat';
  status: string;
  submitted_at: string;
  duration_s: number;
  decision: Json | null;
  bonuses: Json[];
  flagged: boolean;
  verified: boolean | null;
  buckets: string[];
  bots: string[];
}

const WORKERS = ['w_3f2a91', 'w_8c01d4', 'w_b77e20', 'w_51aa0c', 'w_e90f3b'];
const BUCKETS = ['relevance', 'facts', 'flags', 'labels', 'overall', 'which_better'];
const TOTAL = 40;
const started = Date.now() - 50 * 60_000;

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function makeUnits(): MockUnit[] {
  const units: MockUnit[] = [];
  for (let i = 0; i < 14; i++) {
    const chat = i % 5 === 4;
    units.push({
      unit_id: `u_${(1000 + i).toString(16)}`,
      worker: WORKERS[i % WORKERS.length],
      pool: i === 2 ? 'screening' : i === 7 ? 'gold' : 'main',
      kind: chat ? 'chat' : 'static',
      status: 'completed',
      submitted_at: iso(started + i * 3.3 * 60_000),
      duration_s: 60 + ((i * 37) % 200),
      decision: null,
      bonuses: [],
      flagged: i === 3,
      verified: i === 9 ? false : true,
      buckets: chat ? ['turn_quality'] : BUCKETS.slice(0, 5),
      bots: chat ? ['parrot'] : [],
    });
  }
  units[0].decision = { decision: 'approve', reason: '', sync_state: 'sent', last_error: null, decided_at: iso(started + 20 * 60_000) };
  units[0].status = 'accepted';
  units[1].decision = { decision: 'reject', reason: 'Answered at random.', sync_state: 'failed', last_error: 'platform answered 503', decided_at: iso(started + 25 * 60_000) };
  units[1].status = 'rejected';
  units[5].bonuses = [{ id: 1, amount: 0.5, reason: 'Very careful work', state: 'uncertain', last_error: 'timed out after sending' }];
  return units.reverse();
}

function send(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  for (const [k, v] of Object.entries(headers)) res.setHeader(k, v);
  res.end(JSON.stringify(body));
}

export function requesterMock() {
  const units = makeUnits();
  const blocked = new Set<string>(['w_e90f3b']);
  const quals = new Map<string, Map<string, number>>();
  let nextBonus = 2;
  let lastArrival = Date.now();

  /** A new submission about every 20 s while the page polls. */
  function arrive() {
    const done = units.filter((u) => u.pool === 'main').length;
    if (Date.now() - lastArrival < 20_000 || done >= TOTAL) return;
    lastArrival = Date.now();
    const i = units.length;
    units.unshift({
      unit_id: `u_${(1000 + i).toString(16)}`,
      worker: WORKERS[i % 4],
      pool: 'main',
      kind: 'static',
      status: 'completed',
      submitted_at: iso(Date.now()),
      duration_s: 70 + ((i * 13) % 90),
      decision: null,
      bonuses: [],
      flagged: false,
      verified: true,
      buckets: BUCKETS.slice(0, 5),
      bots: [],
    });
  }

  function overview(): Json {
    arrive();
    const done = units.filter((u) => u.pool === 'main').length;
    const points = [];
    const bucket = 300_000;
    for (let t = started; t <= Date.now(); t += bucket) {
      points.push({ t: iso(t), submissions: units.filter((u) => Date.parse(u.submitted_at) >= t && Date.parse(u.submitted_at) < t + bucket).length });
    }
    const failedReviews = units.filter((u) => u.decision?.sync_state === 'failed').length;
    const failedBonuses = units.flatMap((u) => u.bonuses).filter((b) => b.state === 'failed' || b.state === 'uncertain').length;
    return {
      task: 'demo',
      current_run: 2,
      state: done >= TOTAL ? 'complete' : 'running',
      provider: process.env.CEP_MOCK_PROVIDER ?? 'prolific',
      server_time: iso(Date.now()),
      progress: { total: TOTAL, done, in_progress: done >= TOTAL ? 0 : 3, waiting: Math.max(0, TOTAL - done - 3) },
      runs: [
        { run_id: 1, status: 'stopped', started_at: iso(started - 86_400_000), units: { launched: 0, assigned: 0, completed: 4, expired: 2 } },
        { run_id: 2, status: 'running', started_at: iso(started), units: { launched: TOTAL - done - 3, assigned: 3, completed: done - 4 } },
      ],
      throughput: { bucket_seconds: 300, points },
      time_per_unit: { count: done, median_s: 95.2, p90_s: 180 },
      screening: { passed: 5, failed: 2, pass_rate: 0.714 },
      gold: { passed: 9, failed: 1, pass_rate: 0.9 },
      live_chats: 2,
      quotas: [
        { bot: 'parrot', needed: 10, done: 4, in_progress: 1 },
        { bot: 'echo|parrot', needed: 6, done: 1, in_progress: 1 },
      ],
      sync_failures: { reviews: failedReviews, bonuses: failedBonuses },
    };
  }

  function workers(): Json {
    return {
      workers: WORKERS.map((w, i) => {
        const mine = units.filter((u) => u.worker === w);
        const flags = [];
        if (blocked.has(w)) flags.push('blocked');
        if (mine.some((u) => u.flagged)) flags.push('flagged_work');
        if (mine.some((u) => u.verified === false)) flags.push('unverified');
        return {
          pseudonym: w,
          provider: 'prolific',
          units_done: mine.length,
          in_progress: i < 3 ? 1 : 0,
          median_s: 80 + i * 11.5,
          last_seen: mine[0]?.submitted_at ?? null,
          screening: i === 3 ? 'failed' : 'passed',
          gold: { passed: 3 - (i % 2), failed: i % 2 },
          qualifications: [
            { name: 'cep_screening_demo', value: i === 3 ? 0 : 1 },
            ...Array.from(quals.get(w) ?? new Map<string, number>(), ([name, value]) => ({ name, value })),
          ],
          flags,
        };
      }),
    };
  }

  function review(q: URLSearchParams): Json {
    let items = units.slice();
    const worker = q.get('worker');
    if (worker) items = items.filter((u) => u.worker.includes(worker));
    if (q.get('status')) items = items.filter((u) => u.status === q.get('status'));
    const decision = q.get('decision');
    if (decision === 'none') items = items.filter((u) => !u.decision);
    else if (decision) items = items.filter((u) => u.decision?.decision === decision);
    if (q.get('bucket')) items = items.filter((u) => u.buckets.includes(q.get('bucket')!));
    if (q.get('flag') === 'flagged') items = items.filter((u) => u.flagged);
    if (q.get('flag') === 'unverified') items = items.filter((u) => u.verified === false);
    if (q.get('pool')) items = items.filter((u) => u.pool === q.get('pool'));
    const offset = Number(q.get('offset') ?? 0);
    const limit = Math.min(200, Number(q.get('limit') ?? 50));
    return {
      total: items.length,
      offset,
      limit,
      buckets: [...BUCKETS, 'turn_quality'],
      items: items.slice(offset, offset + limit).map(({ bonuses: _b, ...rest }) => rest),
    };
  }

  function detail(u: MockUnit): Json {
    const { buckets: _b, bots: _o, ...rest } = u;
    if (u.kind === 'chat') {
      return {
        ...rest,
        payload: { unit_id: u.unit_id, kind: 'chat', dialogues: [], buckets: {} },
        answers: { chat_0: { overall: { dialogue: { 'How engaging was your partner?': 4 } } } },
        timings: {},
        conversations: [
          {
            conversation_id: 7,
            bot: 'parrot',
            status: 'ended',
            position: 0,
            messages: [
              { index: 0, role: 'worker', text: 'Hi!', labels: null },
              { index: 1, role: 'bot', text: 'Hi! How are you today?', labels: { turn_quality: 'good' } },
              { index: 2, role: 'worker', text: 'Fine. <b>Do you like tea?</b>', labels: null },
              { index: 3, role: 'bot', text: 'Fine. <b>Do you like tea?</b>', labels: { turn_quality: 'repetitive' } },
            ],
          },
        ],
      };
    }
    const unit = makeSampleUnit({ unit_id: u.unit_id, status: u.status });
    return {
      ...rest,
      payload: unit,
      answers: {
        d_one: {
          relevance: {
            '1': { "Is SPEAKER_X's response relevant to what SPEAKER_Y said?": { 'Yes, it follows on naturally.': {} }, 'Does the response ask SPEAKER_Y a question?': { 'Yes.': {} } },
            '3': { "Is SPEAKER_X's response relevant to what SPEAKER_Y said?": { 'No, it is off the point.': { 'What is wrong with it?': { 'It changes the topic abruptly.': {} } } }, 'Does the response ask SPEAKER_Y a question?': { 'No.': {} } },
          },
          labels: { '1': ['asks'], '3': [] },
          overall: { dialogue: { 'How engaging was the bot?': 4, 'How consistent was the bot?': 2 } },
        },
        d_two: { which_better: { dialogue: { option: 'The second one', side: 'right', dialogue: 'turns2' } } },
      },
      timings: { duration_ms: u.duration_s * 1000 },
      conversations: [],
    };
  }

  function results(): Json {
    const n = units.filter((u) => u.pool === 'main').length;
    return {
      questions: [
        { bucket: 'relevance', question: "Is SPEAKER_X's response relevant to what SPEAKER_Y said?", text: null, n, answers: { 'Yes, it follows on naturally.': Math.ceil(n * 0.7), 'No, it is off the point.': Math.floor(n * 0.3) } },
        { bucket: 'overall', question: 'How engaging was the bot?', text: 'How engaging was the bot?', n, answers: { '1': 1, '2': 2, '3': Math.floor(n / 3), '4': Math.floor(n / 3), '5': 3 } },
        { bucket: 'labels', question: 'labels', text: 'Tick every label that fits:', n, answers: { greets: 5, asks: 9, off_topic: 2 } },
        { bucket: 'comments', question: 'comment', text: 'Anything else?', n: 4, answers: { '(text)': 4 } },
      ],
      downloads: [
        { label: 'Submissions (JSONL)', url: '/api/requester/submissions?format=jsonl' },
        { label: 'Items (CSV)', url: '/api/requester/submissions?format=csv' },
        { label: 'Items (JSONL)', url: '/api/requester/submissions?format=items-jsonl' },
        { label: 'Worker identities (CSV)', url: '/api/requester/workers/identities?format=csv' },
      ],
    };
  }

  function syncFailures(): Json {
    return {
      reviews: units.filter((u) => u.decision?.sync_state === 'failed').map((u) => ({ unit_id: u.unit_id, decision: u.decision!.decision, attempts: 3, last_error: u.decision!.last_error })),
      bonuses: units.flatMap((u) => u.bonuses.filter((b) => b.state === 'failed' || b.state === 'uncertain').map((b) => ({ ...b, unit_id: u.unit_id, worker: u.worker, attempts: 2 }))),
    };
  }

  /** Answers a requester API request, or returns false for other paths. */
  return function handle(req: IncomingMessage, res: ServerResponse, body: Json | null): boolean {
    const url = new URL(req.url ?? '', 'http://localhost');
    const path = url.pathname;
    if (!path.startsWith('/api/requester/')) return false;
    const method = req.method ?? 'GET';
    const signedIn = (req.headers.cookie ?? '').includes(COOKIE) || req.headers.authorization === `Bearer ${DEV_REQUESTER_TOKEN}`;
    if (path === '/api/requester/session') {
      if (method === 'POST') {
        if (body?.token !== DEV_REQUESTER_TOKEN) {
          send(res, 401, { error: `wrong requester token (the dev mock's token is "${DEV_REQUESTER_TOKEN}")` });
          return true;
        }
        send(res, 200, { task: 'demo', csrf_token: CSRF }, { 'Set-Cookie': `${COOKIE}; HttpOnly; SameSite=Strict; Path=/` });
        return true;
      }
      if (!signedIn) {
        send(res, 401, { error: 'not signed in' });
        return true;
      }
      if (method === 'DELETE') {
        send(res, 200, { ok: true }, { 'Set-Cookie': 'cep_requester=; Max-Age=0; Path=/' });
        return true;
      }
      send(res, 200, { task: 'demo', csrf_token: CSRF });
      return true;
    }
    if (!signedIn) {
      send(res, 401, { error: 'the session ended' });
      return true;
    }
    if (method !== 'GET' && !req.headers.authorization && req.headers['x-csrf-token'] !== CSRF) {
      send(res, 403, { error: 'missing or wrong X-CSRF-Token' });
      return true;
    }
    const m = (re: RegExp) => path.match(re);
    let hit: RegExpMatchArray | null;
    if (path === '/api/requester/overview') send(res, 200, overview());
    else if (path === '/api/requester/workers') send(res, 200, workers());
    else if (path === '/api/requester/review') send(res, 200, review(url.searchParams));
    else if (path === '/api/requester/results') send(res, 200, results());
    else if (path === '/api/requester/sync-failures') send(res, 200, syncFailures());
    else if (path === '/api/requester/sync-failures/retry') {
      for (const u of units) if (u.decision?.sync_state === 'failed') u.decision = { ...u.decision, sync_state: 'sent', last_error: null };
      send(res, 200, syncFailures());
    } else if ((hit = m(/^\/api\/requester\/bonuses\/(\d+)\/resolve$/))) {
      const bonus = units.flatMap((u) => u.bonuses).find((b) => b.id === Number(hit![1]));
      if (!bonus || bonus.state !== 'uncertain') send(res, 409, { error: 'only an uncertain bonus can be resolved' });
      else {
        bonus.state = body?.paid ? 'paid' : 'pending';
        send(res, 200, { ok: true, message: body?.paid ? 'marked as paid' : 'will be sent again' });
      }
    } else if (path === '/api/requester/units/bulk-review') {
      const ids = (body?.unit_ids as string[]) ?? [];
      send(res, 200, {
        results: ids.map((id) => {
          const u = units.find((x) => x.unit_id === id);
          if (!u) return { unit_id: id, ok: false, error: `no unit '${id}'` };
          if (u.decision) return { unit_id: id, ok: false, error: 'already decided' };
          u.decision = { decision: 'approve', reason: '', sync_state: 'sent', last_error: null, decided_at: iso(Date.now()) };
          u.status = 'accepted';
          return { unit_id: id, ok: true, decision: u.decision };
        }),
      });
    } else if ((hit = m(/^\/api\/requester\/units\/([^/]+)(\/review|\/bonus)?$/))) {
      const u = units.find((x) => x.unit_id === decodeURIComponent(hit![1]));
      if (!u) send(res, 404, { error: `no unit '${hit[1]}' in this task` });
      else if (!hit[2]) send(res, 200, detail(u));
      else if (hit[2] === '/review') {
        const decision = String(body?.decision ?? '');
        if (u.decision) send(res, 409, { error: `unit ${u.unit_id} was already decided (${String(u.decision.decision)})` });
        else if (decision === 'reject' && !String(body?.reason ?? '').trim()) send(res, 422, { error: 'a reject needs a reason' });
        else {
          u.decision = { decision, reason: body?.reason ?? '', rejection_category: body?.rejection_category ?? null, sync_state: 'sent', last_error: null, decided_at: iso(Date.now()) };
          u.status = { approve: 'accepted', reject: 'rejected', soft_reject: 'soft_rejected' }[decision] ?? u.status;
          send(res, 200, { unit_id: u.unit_id, ...u.decision });
        }
      } else {
        const bonus = { id: nextBonus++, amount: Number(body?.amount), reason: String(body?.reason ?? ''), state: 'paid', last_error: null };
        u.bonuses.push(bonus);
        send(res, 200, { unit_id: u.unit_id, ...bonus });
      }
    } else if ((hit = m(/^\/api\/requester\/workers\/([^/]+)\/(block|unblock|qualifications\/grant|qualifications\/revoke)$/))) {
      const w = decodeURIComponent(hit[1]);
      if (!WORKERS.includes(w)) send(res, 404, { error: `no worker with pseudonym '${w}'` });
      else if (hit[2] === 'block') {
        blocked.add(w);
        send(res, 200, { worker: w, blocked: true });
      } else if (hit[2] === 'unblock') {
        blocked.delete(w);
        send(res, 200, { worker: w, blocked: false });
      } else {
        const mine = quals.get(w) ?? new Map<string, number>();
        quals.set(w, mine);
        const name = String(body?.name ?? '');
        if (hit[2].endsWith('grant')) mine.set(name, Number(body?.value ?? 1));
        else mine.delete(name);
        send(res, 200, { ok: true, message: `${hit[2].endsWith('grant') ? 'granted' : 'revoked'} ${name} for ${w}` });
      }
    } else send(res, 404, { error: 'Not found' });
    return true;
  };
}
