import { describe, expect, it } from 'vitest';
import { canWrite, chatOutcome, chatReducer, newSession, type ChatEvent, type ChatSession } from '../src/chat';
import { activeConversation, chatState, conversation, msg, pairedState } from './chatFixtures';

function apply(session: ChatSession, ...events: ChatEvent[]): ChatSession {
  return events.reduce((s, event) => chatReducer(s, { type: 'event', event }), session);
}

const active = () => newSession(chatState({ conversations: [activeConversation(0, 'Partner')] }));

describe('chatReducer', () => {
  it('a state event replaces the whole state', () => {
    const before = active();
    const next = chatState({ current: null, conversations: [conversation(0, 'Partner', { status: 'ended' })] });
    expect(apply(before, { type: 'state', chat: next }).chat).toBe(next);
  });

  it('pieces append to the reply with their index; the message replaces the reply', () => {
    let s = apply(active(), { type: 'typing', position: 0, index: 3 });
    expect(s.chat.conversations[0].reply).toEqual({ index: 3, text: '' });
    s = apply(s, { type: 'piece', position: 0, index: 3, text: 'Sure, I ' }, { type: 'piece', position: 0, index: 3, text: 'lo' });
    expect(s.chat.conversations[0].reply).toEqual({ index: 3, text: 'Sure, I lo' });
    s = apply(s, { type: 'message', position: 0, message: msg(3, 'bot', 'Sure, I love jazz.') });
    expect(s.chat.conversations[0].reply).toBeNull();
    expect(s.chat.conversations[0].messages.at(-1)).toEqual(msg(3, 'bot', 'Sure, I love jazz.'));
  });

  it('a piece of another reply starts it afresh; pieces of a stored message are ignored', () => {
    const s0 = newSession(
      chatState({ conversations: [activeConversation(0, 'Partner', { reply: { index: 3, text: 'old' } })] }),
    );
    expect(apply(s0, { type: 'piece', position: 0, index: 5, text: 'new' }).chat.conversations[0].reply).toEqual({
      index: 5,
      text: 'new',
    });
    const late = apply(s0, { type: 'piece', position: 0, index: 1, text: 'x' });
    expect(late.chat.conversations[0].reply).toEqual({ index: 3, text: 'old' });
  });

  it('an outgoing message is confirmed by index: after the 202 answer, then the message event', () => {
    let s = chatReducer(active(), { type: 'sending', message: { clientId: 'c1', position: 0, text: 'Fine.', index: null } });
    expect(canWrite(s.chat.conversations[0], s.outgoing)).toBe(false);
    s = chatReducer(s, { type: 'sent', clientId: 'c1', index: 2 });
    expect(s.outgoing).toEqual([{ clientId: 'c1', position: 0, text: 'Fine.', index: 2 }]);
    s = apply(s, { type: 'message', position: 0, message: msg(2, 'worker', 'Fine.') });
    expect(s.outgoing).toEqual([]);
    expect(s.chat.conversations[0].messages.map((m) => m.index)).toEqual([0, 1, 2]);
  });

  it('a message event before the 202 answer confirms the outgoing message by its text', () => {
    let s = chatReducer(active(), { type: 'sending', message: { clientId: 'c1', position: 0, text: 'Fine.', index: null } });
    s = apply(s, { type: 'message', position: 0, message: msg(2, 'worker', 'Fine.') });
    expect(s.outgoing).toEqual([]);
    s = chatReducer(s, { type: 'sent', clientId: 'c1', index: 2 });
    expect(s.outgoing).toEqual([]);
    expect(s.chat.conversations[0].messages).toHaveLength(3);
  });

  it('a state that holds the sent message drops it from the outgoing ones', () => {
    let s = chatReducer(active(), { type: 'sending', message: { clientId: 'c1', position: 0, text: 'Fine.', index: null } });
    s = chatReducer(s, { type: 'sent', clientId: 'c1', index: 2 });
    const c = activeConversation(0, 'Partner');
    s = apply(s, { type: 'state', chat: chatState({ conversations: [{ ...c, messages: [...c.messages, msg(2, 'worker', 'Fine.')] }] }) });
    expect(s.outgoing).toEqual([]);
  });

  it('a message not sent is taken back', () => {
    let s = chatReducer(active(), { type: 'sending', message: { clientId: 'c1', position: 0, text: 'Fine.', index: null } });
    s = chatReducer(s, { type: 'not-sent', clientId: 'c1' });
    expect(s.outgoing).toEqual([]);
    expect(canWrite(s.chat.conversations[0], s.outgoing)).toBe(true);
  });

  it('counts turns without the opener, awaits the reply, and allows END after the last answer', () => {
    let s = newSession(chatState({ num_turns: 1, conversations: [conversation(0, 'Partner', { status: 'active' })] }));
    s = apply(s, { type: 'message', position: 0, message: msg(0, 'worker', 'Hi!') });
    expect(s.chat.conversations[0].turns_done).toBe(0);
    s = apply(s, { type: 'message', position: 0, message: msg(1, 'bot', 'Hello') });
    expect(s.chat.conversations[0].can_end).toBe(false);
    expect(Date.parse(s.chat.conversations[0].respond_by!)).toBe(Date.parse(msg(1, 'bot', '').sent_at) + 600_000);
    s = apply(s, { type: 'message', position: 0, message: msg(2, 'worker', 'Tell me a joke') });
    const waiting = s.chat.conversations[0];
    expect(waiting.turns_done).toBe(1);
    expect(waiting.reply).toEqual({ index: 3, text: '' });
    expect(waiting.respond_by).toBeNull();
    expect(canWrite(waiting, s.outgoing)).toBe(false);
    s = apply(s, { type: 'message', position: 0, message: msg(3, 'bot', 'Knock knock') });
    expect(s.chat.conversations[0].can_end).toBe(true);
    expect(canWrite(s.chat.conversations[0], s.outgoing)).toBe(false);
  });

  it('an error ends the reply; retrying waits for the reply again', () => {
    let s = apply(active(), { type: 'typing', position: 0, index: 3 }, { type: 'error', position: 0, message: 'Bot down', retry: true });
    expect(s.chat.conversations[0].reply).toBeNull();
    expect(s.chat.conversations[0].error).toEqual({ message: 'Bot down', retry: true });
    expect(canWrite(s.chat.conversations[0], s.outgoing)).toBe(false);
    s = chatReducer(s, { type: 'retrying', position: 0 });
    expect(s.chat.conversations[0].error).toBeNull();
    expect(s.chat.conversations[0].reply).toEqual({ index: 2, text: '' });
  });

  it('events are applied to the conversation they name', () => {
    const s = apply(
      newSession(pairedState({ current: 1, conversations: [conversation(0, 'Partner A', { status: 'ended' }), activeConversation(1, 'Partner B')] })),
      { type: 'piece', position: 1, index: 2, text: 'Yo' },
      { type: 'piece', position: 7, index: 2, text: 'lost' },
    );
    expect(s.chat.conversations[0].reply).toBeNull();
    expect(s.chat.conversations[1].reply).toEqual({ index: 2, text: 'Yo' });
  });
});

describe('chatOutcome', () => {
  it('is finished only when every conversation ended', () => {
    expect(chatOutcome(chatState())).toBe('chatting');
    expect(chatOutcome(chatState({ current: null, conversations: [conversation(0, 'P', { status: 'ended' })] }))).toBe('finished');
    expect(chatOutcome(chatState({ conversations: [conversation(0, 'P', { status: 'timed_out' })] }))).toBe('stopped');
    expect(chatOutcome(chatState({ conversations: [conversation(0, 'P', { status: 'failed' })] }))).toBe('stopped');
  });
});
