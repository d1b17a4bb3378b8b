import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/App';
import { ChatUnit } from '../src/components/ChatUnit';
import type { SubmitTimings } from '../src/types';
import { activeConversation, chatState, chatUnit, conversation, msg, pairedState } from './chatFixtures';
import { chatServer } from './chatServer';

const LINK = '?worker_id=w1&assignment_id=a1&sig=s1';

const log = () => screen.getByRole('log');
const textbox = () => screen.getByRole('textbox', { name: 'Your message' });
const sendButton = () => screen.getByRole('button', { name: 'Send' });
const bubbles = () => within(log()).queryAllByRole('listitem').map((li) => li.textContent);

beforeEach(() => {
  vi.unstubAllGlobals();
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('chat unit', () => {
  it('opens with "Before you start" (the task, its instructions, what the chat asks); Start the chat starts it', async () => {
    const user = userEvent.setup();
    const pending = chatState();
    const unit = chatUnit(pending);
    unit.task.description_html = '<p>Talk about <b>gardening</b>.</p>';
    const started = chatState({
      conversations: [conversation(0, 'Partner', { status: 'active', messages: [msg(0, 'worker', 'Hi!')], reply: { index: 1, text: '' } })],
    });
    const server = chatServer(unit, { 'POST /api/chat/u_c/start': () => [200, started] });
    render(<App search={LINK} />);
    const stream = await server.stream();
    stream.state(pending);

    expect(await screen.findByRole('heading', { name: 'Before you start' })).toHaveFocus();
    expect(screen.getByText('gardening').tagName).toBe('B');
    expect(screen.getByText('You will chat with a partner and write 2 messages.')).toBeInTheDocument();
    expect(screen.getByText('Your partner is a chatbot: a computer program writes its replies.')).toBeInTheDocument();
    expect(screen.getByText('You have 10 minutes to write each message.')).toBeInTheDocument();
    expect(screen.queryByRole('textbox', { name: 'Your message' })).toBeNull();
    await new Promise((r) => setTimeout(r, 50));
    expect(server.posts('start')).toHaveLength(0);
    await user.click(screen.getByRole('button', { name: 'Start the chat' }));
    await waitFor(() => expect(server.posts('start')).toHaveLength(1));
    expect(server.posts('start')[0].auth).toBe('Bearer tok');
    // The status changed: the server sends the state again.
    stream.state(started);
    expect(server.calls.find((c) => c.url === '/api/chat/u_c/events')!.auth).toBe('Bearer tok');
    expect(await screen.findByRole('log', { name: 'Conversation with Partner' })).toHaveAttribute('aria-live', 'polite');
    expect(screen.getByRole('heading', { name: 'Chat with a bot' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Chat with Partner' })).toBeInTheDocument();
    expect(screen.getByText('Turn 0 of 2')).toBeInTheDocument();
    expect(bubbles()).toEqual(['YouHi!']);
    expect(screen.getByText('Partner is typing…')).toHaveAttribute('role', 'status');
    expect(sendButton()).toBeDisabled();

    stream.send('piece', { position: 0, index: 1, text: 'Hello' });
    await waitFor(() => expect(bubbles()).toEqual(['YouHi!', 'PartnerHello']));
    expect(screen.queryByText('Partner is typing…')).toBeNull();
    expect(log()).toHaveAttribute('aria-busy', 'true');
    stream.send('piece', { position: 0, index: 1, text: ' there' });
    await waitFor(() => expect(bubbles()).toEqual(['YouHi!', 'PartnerHello there']));
    stream.send('message', { position: 0, index: 1, role: 'bot', text: 'Hello there! How are you?', sent_at: new Date().toISOString() });
    await waitFor(() => expect(bubbles()).toEqual(['YouHi!', 'PartnerHello there! How are you?']));
    expect(log()).toHaveAttribute('aria-busy', 'false');
    expect(screen.getByRole('timer')).toHaveTextContent(/^Time to reply (9:59|10:00)$/);
    await waitFor(() => expect(textbox()).toHaveFocus());
    expect(textbox()).toHaveAttribute('aria-disabled', 'false');
    // The task stays one click away while chatting.
    await user.click(screen.getByRole('button', { name: 'Task instructions' }));
    expect(within(screen.getByRole('dialog', { name: 'Task instructions' })).getByText('gardening')).toBeInTheDocument();
  });

  it('Enter sends with a client_message_id, shows the message at once, and keeps focus; Shift+Enter makes a new line', async () => {
    const user = userEvent.setup();
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    const server = chatServer(chatUnit(chat), { 'POST /api/chat/u_c/messages': () => [202, { index: 2, sent_at: 'now' }] });
    render(<App search={LINK} />);
    (await server.stream()).state(chat);
    await user.click(await screen.findByRole('textbox', { name: 'Your message' }));
    expect(sendButton()).toBeDisabled();
    await user.keyboard('   {Enter}');
    expect(server.posts('messages')).toHaveLength(0);

    await user.clear(textbox());
    await user.keyboard('Fine.{Shift>}{Enter}{/Shift}Do you like music?');
    expect(textbox()).toHaveValue('Fine.\nDo you like music?');
    expect(screen.getByText('24 / 200 characters')).toBeInTheDocument();
    await user.keyboard('{Enter}');

    expect(bubbles().at(-1)).toBe('YouFine.\nDo you like music?Sending…');
    expect(textbox()).toHaveValue('');
    expect(textbox()).toHaveFocus();
    await waitFor(() => expect(server.posts('messages')).toHaveLength(1));
    const body = server.posts('messages')[0].body as { text: string; client_message_id: string };
    expect(body.text).toBe('Fine.\nDo you like music?');
    expect(body.client_message_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

    // Until the bot answered, the worker cannot send.
    expect(textbox()).toHaveAttribute('aria-disabled', 'true');
    await user.keyboard('more');
    expect(textbox()).toHaveValue('');
    expect(sendButton()).toBeDisabled();

    server.streams[0].send('message', { position: 0, index: 2, role: 'worker', text: 'Fine.\nDo you like music?', sent_at: 'now' });
    await waitFor(() => expect(bubbles().at(-1)).toBe('YouFine.\nDo you like music?'));
    expect(bubbles()).toHaveLength(3);
    expect(screen.getByText('Turn 1 of 2')).toBeInTheDocument();
    expect(screen.getByText('Partner is typing…')).toBeInTheDocument();
    expect(screen.queryByRole('timer')).toBeNull();
    expect(textbox()).toHaveFocus();
  });

  it('a network error while sending is retried once with the same id', async () => {
    const user = userEvent.setup();
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    let tries = 0;
    const server = chatServer(chatUnit(chat), {
      'POST /api/chat/u_c/messages': () => (++tries === 1 ? [0, new TypeError('offline')] : [202, { index: 2, sent_at: 'now' }]),
    });
    render(<App search={LINK} />);
    (await server.stream()).state(chat);
    await user.type(await screen.findByRole('textbox', { name: 'Your message' }), 'Hello{Enter}');
    await waitFor(() => expect(server.posts('messages')).toHaveLength(2));
    const [first, second] = server.posts('messages').map((c) => c.body as { client_message_id: string });
    expect(second.client_message_id).toBe(first.client_message_id);
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('a message the server refuses comes back into the box with the reason', async () => {
    const user = userEvent.setup();
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    const server = chatServer(chatUnit(chat), { 'POST /api/chat/u_c/messages': () => [409, { error: 'A reply is in progress.' }] });
    render(<App search={LINK} />);
    (await server.stream()).state(chat);
    await user.type(await screen.findByRole('textbox', { name: 'Your message' }), 'Hello{Enter}');
    expect(await screen.findByRole('alert')).toHaveTextContent('Your message was not sent: A reply is in progress.');
    expect(textbox()).toHaveValue('Hello');
    expect(bubbles()).toHaveLength(2);
  });

  it('text is shown as text, never as HTML', async () => {
    const chat = chatState({
      conversations: [activeConversation(0, 'Partner', { messages: [msg(0, 'worker', '<b>bold</b>'), msg(1, 'bot', '<img src=x onerror=alert(1)>')] })],
    });
    const server = chatServer(chatUnit(chat));
    render(<App search={LINK} />);
    (await server.stream()).state(chat);
    expect(await screen.findByText('<b>bold</b>')).toBeInTheDocument();
    expect(screen.getByText('<img src=x onerror=alert(1)>')).toBeInTheDocument();
    expect(log().querySelector('b, img')).toBeNull();
  });

  it('END appears only once the last reply is in; the text box is disabled then', async () => {
    const chat = chatState({ num_turns: 1, conversations: [activeConversation(0, 'Partner')] });
    const server = chatServer(chatUnit(chat), { 'POST /api/chat/u_c/messages': () => [202, { index: 2, sent_at: 'now' }] });
    const user = userEvent.setup();
    render(<App search={LINK} />);
    const stream = await server.stream();
    stream.state(chat);
    await user.type(await screen.findByRole('textbox', { name: 'Your message' }), 'Bye{Enter}');
    stream.send('message', { position: 0, index: 2, role: 'worker', text: 'Bye', sent_at: 'now' });
    await screen.findByText('Turn 1 of 1');
    expect(screen.queryByRole('button', { name: 'End chat' })).toBeNull();
    stream.send('message', { position: 0, index: 3, role: 'bot', text: 'Goodbye!', sent_at: 'now' });
    expect(await screen.findByRole('button', { name: 'End chat' })).toBeEnabled();
    expect(textbox()).toHaveAttribute('aria-disabled', 'true');
    expect(sendButton()).toBeDisabled();
  });

  it('paired: ending chat 1 leads to chat 2; the last END submits and shows the completion page', async () => {
    const user = userEvent.setup();
    const a = activeConversation(0, 'Partner A', { turns_done: 2, can_end: true, respond_by: null });
    const afterFirst = pairedState({ current: 1, conversations: [{ ...a, status: 'ended', can_end: false }, conversation(1, 'Partner B')] });
    const b = activeConversation(1, 'Partner B', { turns_done: 2, can_end: true, respond_by: null });
    const inSecond = pairedState({ current: 1, conversations: [afterFirst.conversations[0], b] });
    const done = pairedState({ current: null, conversations: [afterFirst.conversations[0], { ...b, status: 'ended', can_end: false }] });
    let ends = 0;
    const server = chatServer(chatUnit(pairedState({ conversations: [a, conversation(1, 'Partner B')] })), {
      'POST /api/chat/u_c/end': () => [200, ++ends === 1 ? afterFirst : done],
      'POST /api/chat/u_c/start': () => [200, inSecond],
    });
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Chat 1 of 2: Partner A' })).toBeInTheDocument();
    expect(screen.getByRole('log', { name: 'Conversation with Partner A' })).toBeInTheDocument();
    expect(screen.getByText('Turn 2 of 2')).toBeInTheDocument();
    expect(server.posts('start')).toHaveLength(0);

    await user.click(screen.getByRole('button', { name: 'End chat' }));
    const heading = await screen.findByRole('heading', { name: 'Chat 1 of 2 is done.' });
    expect(heading).toHaveFocus();
    expect(screen.getByText('Next you will chat with Partner B.')).toBeInTheDocument();
    expect(server.posts('start')).toHaveLength(0);

    await user.click(screen.getByRole('button', { name: 'Start the next chat' }));
    expect(await screen.findByRole('log', { name: 'Conversation with Partner B' })).toBeInTheDocument();
    expect(screen.getByRole('heading', { name: 'Chat 2 of 2: Partner B' })).toBeInTheDocument();
    expect(server.posts('start')).toHaveLength(1);

    await user.click(screen.getByRole('button', { name: 'End chat' }));
    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    expect(screen.getByText(/Your completion code:/)).toHaveTextContent('Your completion code: CHAT-42');
    const submits = server.calls.filter((c) => c.url === '/api/units/u_c/submit');
    expect(submits).toHaveLength(1);
    const body = submits[0].body as { answers: unknown; timings: SubmitTimings; client_id: string };
    expect(body.answers).toEqual({});
    expect(body.timings.steps).toEqual([]);
    expect(body.timings.duration_ms).toBeGreaterThanOrEqual(0);
    expect(submits[0].auth).toBe('Bearer tok');
    // The stream is closed once the unit is done.
    expect(server.calls.filter((c) => c.url.endsWith('/events')).every((c) => c.signal?.aborted)).toBe(true);
  });

  it('a reload after chat 1 shows the screen before chat 2 (no automatic start)', async () => {
    const chat = pairedState({ current: 1, conversations: [conversation(0, 'Partner A', { status: 'ended' }), conversation(1, 'Partner B')] });
    const server = chatServer(chatUnit(chat));
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Chat 1 of 2 is done.' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Start the next chat' })).toBeEnabled();
    expect(server.posts('start')).toHaveLength(0);
  });

  it('a bot error with retry offers Try again, which asks again', async () => {
    const user = userEvent.setup();
    const chat = chatState({ conversations: [activeConversation(0, 'Partner', { reply: { index: 2, text: '' }, respond_by: null })] });
    const server = chatServer(chatUnit(chat), { 'POST /api/chat/u_c/retry': () => [202, {}] });
    render(<App search={LINK} />);
    const stream = await server.stream();
    stream.state(chat);
    await screen.findByText('Partner is typing…');
    stream.send('error', { position: 0, message: 'Your partner did not answer.', retry: true });
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Your partner did not answer.');
    expect(screen.queryByText('Partner is typing…')).toBeNull();
    expect(sendButton()).toBeDisabled();
    await user.click(within(alert).getByRole('button', { name: 'Try again' }));
    await waitFor(() => expect(server.posts('retry')).toHaveLength(1));
    expect(await screen.findByText('Partner is typing…')).toBeInTheDocument();
    expect(screen.queryByRole('alert')).toBeNull();
  });

  it('a bot failure for good says the chat cannot go on, with no text box', async () => {
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    const server = chatServer(chatUnit(chat));
    render(<App search={LINK} />);
    const stream = await server.stream();
    stream.state(chat);
    await screen.findByRole('textbox', { name: 'Your message' });
    stream.send('error', { position: 0, message: 'The bot failed.', retry: false });
    expect(await screen.findByRole('alert')).toHaveTextContent('The bot failed.');
    expect(screen.queryByRole('button', { name: 'Try again' })).toBeNull();
    stream.state(chatState({ conversations: [activeConversation(0, 'Partner', { status: 'failed', error: { message: 'The bot failed.', retry: false } })] }));
    expect(await screen.findByText(/Your partner had a technical problem and this chat cannot continue/)).toBeInTheDocument();
    expect(screen.queryByRole('textbox')).toBeNull();
    expect(bubbles()).toHaveLength(2);
  });

  it('a timed-out chat says the time ran out, with no text box', async () => {
    const chat = chatState({ conversations: [activeConversation(0, 'Partner', { status: 'timed_out' })] });
    chatServer(chatUnit(chat));
    render(<App search={LINK} />);
    expect(await screen.findByRole('alert')).toHaveTextContent('The time to answer ran out.');
    expect(screen.getByRole('alert')).toHaveTextContent('the task went back to the pool');
    expect(screen.queryByRole('textbox')).toBeNull();
    expect(screen.queryByRole('button', { name: 'End chat' })).toBeNull();
  });

  it('reconnects after the stream breaks; the new state replaces the old one', async () => {
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    const unit = chatUnit(chat);
    const server = chatServer(unit);
    render(
      <ChatUnit unit={unit} chat={chat} token="tok" onCompleted={() => {}} onRefused={() => {}} reconnectDelays={{ firstMs: 20, maxMs: 40 }} />,
    );
    const first = await server.stream(1);
    first.state(chat);
    first.send('piece', { position: 0, index: 2, text: 'lost words' });
    await waitFor(() => expect(bubbles()).toHaveLength(3));
    first.fail();
    expect(await screen.findByText('Connection lost — reconnecting…')).toHaveAttribute('role', 'status');

    const second = await server.stream(2);
    const c = activeConversation(0, 'Partner');
    second.state(chatState({ conversations: [{ ...c, turns_done: 1, messages: [...c.messages, msg(2, 'bot', 'Back again')] }] }));
    await waitFor(() => expect(bubbles()).toEqual(['YouHi!', 'PartnerHello! How are you?', 'PartnerBack again']));
    expect(screen.queryByText('Connection lost — reconnecting…')).toBeNull();
    expect(screen.getByText('Turn 1 of 2')).toBeInTheDocument();
  });

  it('a stream the server ends after its state is reopened at once, without "Connection lost"', async () => {
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    const unit = chatUnit(chat);
    const server = chatServer(unit);
    render(
      <ChatUnit unit={unit} chat={chat} token="tok" onCompleted={() => {}} onRefused={() => {}} reconnectDelays={{ firstMs: 5000, maxMs: 10000 }} />,
    );
    const first = await server.stream(1);
    first.state(chat);
    await waitFor(() => expect(bubbles()).toHaveLength(2));
    first.end(); // an idle stream's lifetime ran out
    const second = await server.stream(2);
    expect(screen.queryByText('Connection lost — reconnecting…')).toBeNull();
    const c = activeConversation(0, 'Partner');
    second.state(chatState({ conversations: [{ ...c, turns_done: 1, messages: [...c.messages, msg(2, 'bot', 'Still here')] }] }));
    await waitFor(() => expect(bubbles()).toEqual(['YouHi!', 'PartnerHello! How are you?', 'PartnerStill here']));
    second.end(); // ended again at once: now the page waits, and says so
    expect(await screen.findByText('Connection lost — reconnecting…')).toHaveAttribute('role', 'status');
    expect(server.calls.filter((call) => call.url.endsWith('/events'))).toHaveLength(2);
  });

  it('a refused stream (409) shows the error page and does not retry', async () => {
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    const server = chatServer(chatUnit(chat), {}, [409, { error: 'This unit is no longer assigned to you.' }]);
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'This task is no longer available' })).toBeInTheDocument();
    expect(screen.getByText('This unit is no longer assigned to you.')).toBeInTheDocument();
    await new Promise((r) => setTimeout(r, 700));
    expect(server.calls.filter((c) => c.url.endsWith('/events'))).toHaveLength(1);
  });

  it('a failed start can be tried again', async () => {
    const user = userEvent.setup();
    const pending = chatState();
    let tries = 0;
    const server = chatServer(chatUnit(pending), {
      'POST /api/chat/u_c/start': () =>
        ++tries === 1 ? [503, { error: 'No partner is free.' }] : [200, chatState({ conversations: [activeConversation(0, 'Partner')] })],
    });
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Start the chat' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('The chat could not be started: No partner is free.');
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('log', { name: 'Conversation with Partner' })).toBeInTheDocument();
    expect(server.posts('start')).toHaveLength(2);
  });
});
