/**
 * Keeps the chat event stream open: reconnects when it ends or breaks, waiting longer each time
 * (0.5 s doubling to 8 s), until a `state` event shows the connection is good again. A stream
 * the server ended after its `state` (an idle stream's lifetime, docs/chat-api.md) is reopened
 * at once without showing the connection as lost (at most once per `maxMs`, so a server that
 * keeps ending streams gets the waits). A refusal that reconnecting cannot mend (401, 404, 409)
 * stops it and is handed to `onRefused`.
 */
import { useEffect, useRef, useState } from 'react';
import { ApiError, readChatEvents } from './api';
import type { ChatEvent } from './chat';

/** `connecting`: no `state` yet; `open`: the stream delivers; `lost`: waiting to reconnect. */
export type Connection = 'connecting' | 'open' | 'lost';

const FINAL_STATUSES = new Set([401, 404, 409]);

export interface ReconnectDelays {
  firstMs: number;
  maxMs: number;
}

const DELAYS: ReconnectDelays = { firstMs: 500, maxMs: 8000 };

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const id = window.setTimeout(resolve, ms);
    signal.addEventListener('abort', () => {
      window.clearTimeout(id);
      resolve();
    });
  });
}

export function useChatEvents(opts: {
  unitId: string;
  token: string;
  /** Off once the unit is done: the stream is closed. */
  enabled: boolean;
  onEvent: (event: ChatEvent) => void;
  onRefused: (error: ApiError) => void;
  delays?: ReconnectDelays;
}): Connection {
  const { unitId, token, enabled, delays = DELAYS } = opts;
  const [connection, setConnection] = useState<Connection>('connecting');
  const handlers = useRef(opts);
  useEffect(() => {
    handlers.current = opts;
  });
  const { firstMs, maxMs } = delays;

  useEffect(() => {
    if (!enabled) return;
    const stop = new AbortController();
    const { signal } = stop;
    let delay = firstMs;
    let gotState = false;
    let reopenedAt = -Infinity;
    const onEvent = (event: ChatEvent) => {
      if (event.type === 'state') {
        delay = firstMs;
        gotState = true;
        setConnection('open');
      }
      handlers.current.onEvent(event);
    };
    void (async () => {
      while (!signal.aborted) {
        gotState = false;
        let ended = false;
        try {
          await readChatEvents(unitId, token, signal, onEvent);
          ended = true;
        } catch (e) {
          if (e instanceof ApiError && FINAL_STATUSES.has(e.status)) {
            if (!signal.aborted) handlers.current.onRefused(e);
            return;
          }
        }
        if (signal.aborted) return;
        if (ended && gotState && Date.now() - reopenedAt > maxMs) {
          reopenedAt = Date.now();
          continue;
        }
        setConnection('lost');
        await wait(delay, signal);
        delay = Math.min(delay * 2, maxMs);
      }
    })();
    return () => stop.abort();
  }, [unitId, token, enabled, firstMs, maxMs]);

  return connection;
}
