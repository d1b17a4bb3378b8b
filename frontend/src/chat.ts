/**
 * The page's view of a chat unit (docs/chat-api.md): the server's `chat` object, changed by the
 * events of the stream, plus the worker's messages still on their way to the server.
 */
import type { SseEvent } from './sse';
import type { BucketValue, ChatMessage, ChatState, Conversation } from './types';

/** The events of `GET /api/chat/<unit_id>/events`, as the page uses them. */
export type ChatEvent =
  | { type: 'state'; chat: ChatState }
  | { type: 'message'; position: number; message: ChatMessage }
  | { type: 'typing'; position: number; index: number }
  | { type: 'piece'; position: number; index: number; text: string }
  | { type: 'error'; position: number; message: string; retry: boolean };

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v);

/** Enough of a `chat` object to show it (the server is trusted for the details). */
export function isChatState(v: unknown): v is ChatState {
  return (
    isRecord(v) &&
    isInt(v.num_turns) &&
    isInt(v.max_message_chars) &&
    (v.current === null || isInt(v.current)) &&
    Array.isArray(v.conversations) &&
    v.conversations.every((c) => isRecord(c) && isInt(c.position) && Array.isArray(c.messages))
  );
}

/** The chat event an SSE event carries, or null for unknown events and malformed data. */
export function toChatEvent(sse: SseEvent): ChatEvent | null {
  let d: unknown;
  try {
    d = JSON.parse(sse.data);
  } catch {
    return null;
  }
  if (!isRecord(d)) return null;
  if (sse.type === 'state') return isChatState(d) ? { type: 'state', chat: d } : null;
  const { position, index, text } = d;
  if (!isInt(position)) return null;
  switch (sse.type) {
    case 'message':
      if (!isInt(index) || typeof text !== 'string' || (d.role !== 'worker' && d.role !== 'bot')) return null;
      return {
        type: 'message',
        position,
        message: { index, role: d.role, text, sent_at: typeof d.sent_at === 'string' ? d.sent_at : '' },
      };
    case 'typing':
      return isInt(index) ? { type: 'typing', position, index } : null;
    case 'piece':
      return isInt(index) && typeof text === 'string' ? { type: 'piece', position, index, text } : null;
    case 'error':
      return typeof d.message === 'string' ? { type: 'error', position, message: d.message, retry: d.retry === true } : null;
    default:
      return null;
  }
}

/** A worker message sent from this page and not yet confirmed by a `message` event. */
export interface OutgoingMessage {
  clientId: string;
  position: number;
  text: string;
  /** The index the server gave it (`202` answer); null until then. */
  index: number | null;
}

export interface ChatSession {
  chat: ChatState;
  outgoing: OutgoingMessage[];
}

export type ChatAction =
  | { type: 'event'; event: ChatEvent }
  | { type: 'sending'; message: OutgoingMessage }
  | { type: 'sent'; clientId: string; index: number }
  | { type: 'not-sent'; clientId: string }
  /** The server accepted `POST .../retry`: the bot works on the failed reply again. */
  | { type: 'retrying'; position: number }
  /** The server stored the label of a bot message (sent with a message). */
  | { type: 'labelled'; position: number; index: number; labels: BucketValue };

export function newSession(chat: ChatState): ChatSession {
  return { chat, outgoing: [] };
}

function mapConversation(chat: ChatState, position: number, fn: (c: Conversation) => Conversation): ChatState {
  if (!chat.conversations.some((c) => c.position === position)) return chat;
  return { ...chat, conversations: chat.conversations.map((c) => (c.position === position ? fn(c) : c)) };
}

function nextIndex(c: Conversation): number {
  return c.messages.reduce((max, m) => Math.max(max, m.index + 1), 0);
}

/** `max_resp_time` seconds after the bot's message: when the worker's answer is due. */
function dueAfter(sentAt: string, seconds: number): string | null {
  const t = Date.parse(sentAt);
  return Number.isFinite(t) && Number.isFinite(seconds) ? new Date(t + seconds * 1000).toISOString() : null;
}

/**
 * A stored message. The stream only sends `state` when a status changes, so the counters the
 * server keeps (turns, END, the reply deadline) are followed here the way the contract defines
 * them; the next `state` replaces them anyway.
 */
function addMessage(chat: ChatState, c: Conversation, m: ChatMessage): Conversation {
  if (c.messages.some((x) => x.index === m.index)) return c;
  const messages = [...c.messages, m].sort((a, b) => a.index - b.index);
  if (m.role === 'worker') {
    const isOpener = chat.conversation_start_mode === 'hi' && !c.messages.some((x) => x.role === 'worker');
    return {
      ...c,
      messages,
      turns_done: isOpener ? c.turns_done : c.turns_done + 1,
      respond_by: null,
      error: null,
      // The bot answers every worker message: its reply is on the way.
      reply: c.reply ?? { index: m.index + 1, text: '' },
    };
  }
  const done = c.turns_done >= chat.num_turns;
  return {
    ...c,
    messages,
    reply: c.reply?.index === m.index ? null : c.reply,
    can_end: c.can_end || done,
    respond_by: done ? null : dueAfter(m.sent_at, chat.max_resp_time),
  };
}

/** Outgoing messages the conversations now hold are dropped. */
function dropDelivered(outgoing: OutgoingMessage[], chat: ChatState): OutgoingMessage[] {
  const kept = outgoing.filter((o) => {
    const c = chat.conversations.find((x) => x.position === o.position);
    return !(o.index !== null && c?.messages.some((m) => m.index === o.index));
  });
  return kept.length === outgoing.length ? outgoing : kept;
}

/** The outgoing message a worker `message` event confirms: by index, else (no answer yet) by text. */
function confirmed(outgoing: OutgoingMessage[], position: number, m: ChatMessage): OutgoingMessage | undefined {
  const here = outgoing.filter((o) => o.position === position);
  return here.find((o) => o.index === m.index) ?? here.find((o) => o.index === null && o.text === m.text);
}

/** The reply `index` in progress with `text` appended (unless that message is already in). */
function extendReply(chat: ChatState, position: number, index: number, text: string): ChatState {
  return mapConversation(chat, position, (c) =>
    c.messages.some((m) => m.index === index)
      ? c
      : {
          ...c,
          error: null,
          respond_by: null,
          reply: { index, text: (c.reply?.index === index ? c.reply.text : '') + text },
        },
  );
}

function applyEvent(session: ChatSession, event: ChatEvent): ChatSession {
  const { chat, outgoing } = session;
  switch (event.type) {
    case 'state':
      return { chat: event.chat, outgoing: dropDelivered(outgoing, event.chat) };
    case 'message': {
      const next = mapConversation(chat, event.position, (c) => addMessage(chat, c, event.message));
      const match = event.message.role === 'worker' ? confirmed(outgoing, event.position, event.message) : undefined;
      return { chat: next, outgoing: match ? outgoing.filter((o) => o !== match) : outgoing };
    }
    case 'typing':
      return { ...session, chat: extendReply(chat, event.position, event.index, '') };
    case 'piece':
      return { ...session, chat: extendReply(chat, event.position, event.index, event.text) };
    case 'error':
      return {
        ...session,
        chat: mapConversation(chat, event.position, (c) => ({
          ...c,
          reply: null,
          error: { message: event.message, retry: event.retry },
        })),
      };
  }
}

export function chatReducer(session: ChatSession, action: ChatAction): ChatSession {
  switch (action.type) {
    case 'event':
      return applyEvent(session, action.event);
    case 'sending':
      return { ...session, outgoing: [...session.outgoing, action.message] };
    case 'sent': {
      const outgoing = session.outgoing.map((o) => (o.clientId === action.clientId ? { ...o, index: action.index } : o));
      return { ...session, outgoing: dropDelivered(outgoing, session.chat) };
    }
    case 'not-sent':
      return { ...session, outgoing: session.outgoing.filter((o) => o.clientId !== action.clientId) };
    case 'retrying':
      return {
        ...session,
        chat: mapConversation(session.chat, action.position, (c) => ({
          ...c,
          error: null,
          reply: c.reply ?? { index: nextIndex(c), text: '' },
        })),
      };
    case 'labelled':
      return {
        ...session,
        chat: mapConversation(session.chat, action.position, (c) => ({
          ...c,
          messages: c.messages.map((m) => (m.index === action.index && m.labels == null ? { ...m, labels: action.labels } : m)),
        })),
      };
  }
}

/**
 * Where the unit stands: `chatting` while a conversation is to be started or is going on,
 * `finished` when every conversation has ended (the page submits), `stopped` when a
 * conversation timed out or failed (the unit went back to the pool).
 */
export type ChatOutcome = 'chatting' | 'finished' | 'stopped';

export function chatOutcome(chat: ChatState): ChatOutcome {
  if (chat.conversations.some((c) => c.status === 'timed_out' || c.status === 'failed')) return 'stopped';
  if (chat.current === null) return chat.conversations.every((c) => c.status === 'ended') ? 'finished' : 'stopped';
  return 'chatting';
}

/** The conversation to show: the current one, else the one that stopped the unit. */
export function shownConversation(chat: ChatState): Conversation | null {
  const stopped = chat.conversations.find((c) => c.status === 'timed_out' || c.status === 'failed');
  if (stopped) return stopped;
  return chat.conversations.find((c) => c.position === chat.current) ?? null;
}

/** Whether the worker may write now (the server would refuse otherwise). */
export function canWrite(c: Conversation, outgoing: OutgoingMessage[]): boolean {
  return (
    c.status === 'active' &&
    !c.can_end &&
    c.reply === null &&
    c.error === null &&
    !outgoing.some((o) => o.position === c.position)
  );
}
