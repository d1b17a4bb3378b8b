/** Chat units and server states for the chat tests (docs/chat-api.md). */
import { makeSampleUnit } from '../dev/sampleUnit';
import type { ChatMessage, ChatState, Conversation, Unit } from '../src/types';

export function conversation(position: number, partner: string, overrides: Partial<Conversation> = {}): Conversation {
  return {
    position,
    partner,
    status: 'pending',
    turns_done: 0,
    can_end: false,
    respond_by: null,
    reply: null,
    error: null,
    messages: [],
    ...overrides,
  };
}

export function msg(index: number, role: ChatMessage['role'], text: string): ChatMessage {
  return { index, role, text, sent_at: '2026-11-22T23:50:00Z' };
}

export function chatState(overrides: Partial<ChatState> = {}): ChatState {
  return {
    num_turns: 2,
    max_resp_time: 600,
    max_message_chars: 200,
    conversation_start_mode: 'hi',
    current: 0,
    conversations: [conversation(0, 'Partner')],
    ...overrides,
  };
}

/** Two bots one after the other. */
export function pairedState(overrides: Partial<ChatState> = {}): ChatState {
  return chatState({ conversations: [conversation(0, 'Partner A'), conversation(1, 'Partner B')], ...overrides });
}

/** A chat after `start`: the opener sent, the bot's first answer in, the worker to write. */
export function activeConversation(position: number, partner: string, overrides: Partial<Conversation> = {}): Conversation {
  return conversation(position, partner, {
    status: 'active',
    respond_by: new Date(Date.now() + 600_000).toISOString(),
    messages: [msg(0, 'worker', 'Hi!'), msg(1, 'bot', 'Hello! How are you?')],
    ...overrides,
  });
}

export function chatUnit(chat: ChatState): Unit {
  const base = makeSampleUnit();
  return {
    ...base,
    unit_id: 'u_c',
    kind: 'chat',
    task: { title: 'Chat with a bot', description_html: '' },
    seconds_remaining: null,
    dialogues: [],
    buckets: {},
    chat,
  };
}
