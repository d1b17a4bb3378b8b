/** A fake server for chat units, with event streams the test feeds (docs/chat-api.md). */
import { waitFor } from '@testing-library/react';
import { expect, vi } from 'vitest';
import type { ChatState, Unit } from '../src/types';

export interface Call {
  method: string;
  url: string;
  body: unknown;
  auth: string | null;
  signal: AbortSignal | null;
}

/** One response of `GET .../events`, fed by the test. */
export class EventStream {
  private controller!: ReadableStreamDefaultController<Uint8Array>;
  readonly body = new ReadableStream<Uint8Array>({ start: (c) => void (this.controller = c) });
  private readonly encoder = new TextEncoder();

  raw(text: string) {
    this.controller.enqueue(this.encoder.encode(text));
  }
  send(event: string, data: unknown) {
    this.raw(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }
  state(chat: ChatState) {
    this.send('state', chat);
  }
  /** The server ends the stream. */
  end() {
    this.controller.close();
  }
  /** The connection breaks. */
  fail() {
    this.controller.error(new TypeError('network error'));
  }
}

export type Route = (body: unknown, call: Call) => [number, unknown];

/**
 * A fake server for a chat unit: routes by method and path, records every call. Every events
 * request gets a new stream (in `streams`) unless `eventsRefusal` is set.
 */
export function chatServer(unit: Unit, routes: Record<string, Route> = {}, eventsRefusal?: [number, unknown]) {
  const calls: Call[] = [];
  const streams: EventStream[] = [];
  const all: Record<string, Route> = {
    'POST /api/claim': () => [200, { token: 'tok', unit_id: unit.unit_id, status: 'assigned' }],
    [`GET /api/units/${unit.unit_id}`]: () => [200, unit],
    [`POST /api/units/${unit.unit_id}/submit`]: () => [200, { status: 'completed', completion_code: 'CHAT-42' }],
    ...routes,
  };
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    const headers = (init?.headers ?? {}) as Record<string, string>;
    const call = { method, url, body, auth: headers.Authorization ?? null, signal: init?.signal ?? null };
    calls.push(call);
    if (method === 'GET' && url === `/api/chat/${unit.unit_id}/events` && !eventsRefusal) {
      const stream = new EventStream();
      streams.push(stream);
      return new Response(stream.body, { status: 200, headers: { 'Content-Type': 'text/event-stream' } });
    }
    const route = all[`${method} ${url}`];
    const [status, payload] = url.endsWith('/events') && eventsRefusal ? eventsRefusal : route ? route(body, call) : [404, { error: 'not found' }];
    if (payload instanceof Error) throw payload;
    return new Response(JSON.stringify(payload), { status, headers: { 'Content-Type': 'application/json' } });
  });
  vi.stubGlobal('fetch', fetchMock);
  return {
    calls,
    streams,
    /** The stream opened last, once it is open. */
    stream: async (n = 1) => {
      await waitFor(() => expect(streams.length).toBeGreaterThanOrEqual(n));
      return streams[n - 1];
    },
    posts: (path: string) => calls.filter((c) => c.method === 'POST' && c.url === `/api/chat/u_c/${path}`),
  };
}

