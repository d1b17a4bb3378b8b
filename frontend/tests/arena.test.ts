import { describe, expect, it } from 'vitest';
import { voteDue } from '../src/arena/ArenaUnit';
import { chatReducer, newSession, type ChatEvent } from '../src/chat';
import type { ArenaVote, ChatState } from '../src/types';
import { activeConversation, chatState, msg } from './chatFixtures';

const arena = (overrides: Partial<ArenaVote> = {}): ArenaVote => ({
  vote: 'per_turn',
  question: 'Which reply is better?',
  options: [],
  votes: [],
  vote_due: null,
  finished: false,
  models: null,
  ...overrides,
});

/** A battle after the worker's first message: both replies on their way. */
function waiting(vote: Partial<ArenaVote> = {}, numTurns = 2): ChatState {
  const side = (position: number, partner: string) =>
    activeConversation(position, partner, { turns_done: 1, messages: [msg(0, 'worker', 'hi')], reply: { index: 1, text: '' } });
  return chatState({ num_turns: numTurns, conversations: [side(0, 'Model A'), side(1, 'Model B')], arena: arena(vote) });
}

function reply(chat: ChatState, position: number): ChatState {
  const event: ChatEvent = { type: 'message', position, message: msg(1, 'bot', `reply ${position}`) };
  return chatReducer(newSession(chat), { type: 'event', event }).chat;
}

describe('voteDue', () => {
  it('asks for the vote once both replies are in, not before', () => {
    const chat = waiting();
    expect(voteDue(chat)).toBeNull();
    expect(voteDue(reply(chat, 0))).toBeNull();
    expect(voteDue(reply(reply(chat, 0), 1))).toBe(1);
  });

  it('does not ask again for a turn voted on', () => {
    const chat = reply(reply(waiting({ votes: [{ turn: 1, choice: 'a' }] }), 0), 1);
    expect(voteDue(chat)).toBeNull();
  });

  it('with vote: end, asks only after the last message', () => {
    expect(voteDue(reply(reply(waiting({ vote: 'end' }, 2), 0), 1))).toBeNull();
    expect(voteDue(reply(reply(waiting({ vote: 'end' }, 1), 0), 1))).toBe(1);
  });

  it('waits while a side has failed', () => {
    const chat = reply(waiting(), 0);
    const failed = chatReducer(newSession(chat), {
      type: 'event',
      event: { type: 'error', position: 1, message: 'down', retry: true },
    }).chat;
    expect(voteDue(failed)).toBeNull();
  });
});
