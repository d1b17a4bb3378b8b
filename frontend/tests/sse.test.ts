import { describe, expect, it } from 'vitest';
import { toChatEvent } from '../src/chat';
import { SseParser, type SseEvent } from '../src/sse';

function parseAll(chunks: string[]): SseEvent[] {
  const parser = new SseParser();
  return chunks.flatMap((c) => parser.push(c));
}

describe('SseParser', () => {
  it('reads event and data fields; a blank line ends the event', () => {
    expect(parseAll(['event: state\ndata: {"a":1}\n\nevent: piece\ndata: {"b":2}\n\n'])).toEqual([
      { type: 'state', data: '{"a":1}' },
      { type: 'piece', data: '{"b":2}' },
    ]);
  });

  it('joins events split across chunks anywhere, even inside a field name', () => {
    const text = 'event: message\ndata: {"text":"héllo"}\n\n';
    for (let cut = 1; cut < text.length; cut++) {
      expect(parseAll([text.slice(0, cut), text.slice(cut)])).toEqual([{ type: 'message', data: '{"text":"héllo"}' }]);
    }
    expect(parseAll(text.split(''))).toEqual([{ type: 'message', data: '{"text":"héllo"}' }]);
  });

  it('an event is not given before its blank line arrives', () => {
    const parser = new SseParser();
    expect(parser.push('event: typing\ndata: {}\n')).toEqual([]);
    expect(parser.push('\n')).toEqual([{ type: 'typing', data: '{}' }]);
  });

  it('tolerates CRLF and CR line ends, also with CR and LF in different chunks', () => {
    expect(parseAll(['event: a\r\ndata: 1\r\n\r\n'])).toEqual([{ type: 'a', data: '1' }]);
    expect(parseAll(['event: a\rdata: 1\r\r'])).toEqual([{ type: 'a', data: '1' }]);
    expect(parseAll(['event: a\r', '\ndata: 1\r', '\n\r', '\n'])).toEqual([{ type: 'a', data: '1' }]);
  });

  it('ignores comment lines (pings)', () => {
    expect(parseAll([': ping\n\n', 'event: a\n: ping\ndata: 1\n\n', ':\n\n'])).toEqual([{ type: 'a', data: '1' }]);
  });

  it('joins multi-line data with "\\n" and strips one leading space only', () => {
    expect(parseAll(['data: first\ndata:second\ndata:  third\n\n'])).toEqual([
      { type: 'message', data: 'first\nsecond\n third' },
    ]);
  });

  it('drops events without data and ignores unknown fields', () => {
    expect(parseAll(['event: lonely\n\n', 'id: 7\nretry: 100\nfoo: bar\nevent: a\ndata: x\n\n'])).toEqual([
      { type: 'a', data: 'x' },
    ]);
  });
});

describe('toChatEvent', () => {
  it('reads the events of the contract', () => {
    expect(toChatEvent({ type: 'piece', data: '{"position":0,"index":3,"text":"Hel"}' })).toEqual({
      type: 'piece',
      position: 0,
      index: 3,
      text: 'Hel',
    });
    expect(toChatEvent({ type: 'typing', data: '{"position":1,"index":2}' })).toEqual({ type: 'typing', position: 1, index: 2 });
    expect(
      toChatEvent({ type: 'message', data: '{"position":0,"index":1,"role":"bot","text":"Hi","sent_at":"2026-01-01T00:00:00Z"}' }),
    ).toEqual({ type: 'message', position: 0, message: { index: 1, role: 'bot', text: 'Hi', sent_at: '2026-01-01T00:00:00Z' } });
    expect(toChatEvent({ type: 'error', data: '{"position":0,"message":"Oops","retry":true}' })).toEqual({
      type: 'error',
      position: 0,
      message: 'Oops',
      retry: true,
    });
    const chat = { num_turns: 2, max_resp_time: 60, max_message_chars: 100, conversation_start_mode: 'hi', current: null, conversations: [] };
    expect(toChatEvent({ type: 'state', data: JSON.stringify(chat) })).toEqual({ type: 'state', chat });
  });

  it('ignores unknown events and malformed data', () => {
    expect(toChatEvent({ type: 'gossip', data: '{"position":0}' })).toBeNull();
    expect(toChatEvent({ type: 'message', data: '{"position":0,"index":1,"role":"admin","text":"x"}' })).toBeNull();
    expect(toChatEvent({ type: 'piece', data: 'not json' })).toBeNull();
    expect(toChatEvent({ type: 'state', data: '{"current":0}' })).toBeNull();
  });
});
