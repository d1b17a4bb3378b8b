/**
 * Development-only mock of the worker API for `npm run dev` (never part of the build).
 * Links: /?worker_id=dev&assignment_id=1 ; worker_id=forged gives 403, worker_id=full gives 409.
 * The requester dashboard: /dashboard, token `dev-requester` (dev/mockRequester.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Plugin } from 'vite';
import { requesterMock } from './mockRequester.ts';
import { makeSampleUnit } from './sampleUnit.ts';

function readBody(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve) => {
    let data = '';
    req.on('data', (c) => (data += c));
    req.on('end', () => {
      try {
        resolve(data ? JSON.parse(data) : null);
      } catch {
        resolve(null);
      }
    });
  });
}

function send(res: ServerResponse, status: number, body: unknown) {
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json');
  res.end(JSON.stringify(body));
}

export function mockApi(): Plugin {
  const unit = makeSampleUnit({ unit_id: 'u_dev' });
  let completed = false;
  const requester = requesterMock();
  return {
    name: 'cep-mock-api',
    configureServer(server) {
      server.middlewares.use(async (req, res, next) => {
        const url = req.url ?? '';
        if (url === '/dashboard' || url.startsWith('/dashboard?')) req.url = url.replace('/dashboard', '/dashboard.html');
        if (!url.startsWith('/api/')) return next();
        const body = (await readBody(req)) as Record<string, unknown> | null;
        if (requester(req, res, body)) return;
        if (url === '/api/claim' && req.method === 'POST') {
          if (body?.worker_id === 'forged') return send(res, 403, { error: 'This link has an invalid signature.' });
          if (body?.worker_id === 'full') return send(res, 409, { error: 'All units of this task are taken.' });
          return send(res, 200, { token: 'dev-token', unit_id: unit.unit_id, status: completed ? 'completed' : 'assigned' });
        }
        if (req.headers.authorization !== 'Bearer dev-token') return send(res, 401, { error: 'Missing token.' });
        if (url === `/api/units/${unit.unit_id}` && req.method === 'GET') {
          return send(res, 200, { ...unit, status: completed ? 'completed' : 'assigned', completion_code: completed ? 'DEV-1234' : null });
        }
        if (url === `/api/units/${unit.unit_id}/draft` && req.method === 'PUT') {
          const saved_at = new Date().toISOString();
          unit.draft = { answers: (body?.answers ?? {}) as never, position: body?.position ?? null, saved_at };
          return send(res, 200, { saved_at });
        }
        if (url === `/api/units/${unit.unit_id}/submit` && req.method === 'POST') {
          console.log('[mock api] submitted', JSON.stringify(body?.answers));
          completed = true;
          return send(res, 200, { status: 'completed', completion_code: 'DEV-1234' });
        }
        return send(res, 404, { error: 'Not found' });
      });
    },
  };
}
