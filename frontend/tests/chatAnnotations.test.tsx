import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/App';
import { ChatUnit } from '../src/components/ChatUnit';
import type { Answers, ChatAnnotations, ChatState, Conversation, OfflineEntry, Unit } from '../src/types';
import { activeConversation, annotatedUnit, chatState, conversation, msg, pairedState } from './chatFixtures';
import { chatServer, type Route } from './chatServer';

const LINK = '?worker_id=w1&assignment_id=a1&sig=s1';
const QUALITY = 'How good is this reply, from 1 (poor) to 5 (excellent)?';
const OVERALL = 'Overall, how good a conversation partner was Partner?';

const log = () => screen.getByRole('log');
const textbox = () => screen.getByRole('textbox', { name: 'Your message' });
const sendButton = () => screen.getByRole('button', { name: 'Send' });
const draftRoute: Record<string, Route> = { 'PUT /api/units/u_c/draft': () => [200, { saved_at: 'now' }] };

function online(bucket: string, required: boolean, offline: OfflineEntry[] = []): ChatAnnotations {
  return { online: { bucket, required }, offline };
}

/** A chat in which the worker is to write, with online labels of `bucket`. */
function labelling(bucket: string, required: boolean, c: Conversation = activeConversation(0, 'Partner')): ChatState {
  return chatState({ conversations: [c], annotations: online(bucket, required) });
}

/** Renders the chat unit directly, with a short draft debounce. */
function renderChat(unit: Unit) {
  return render(
    <ChatUnit unit={unit} chat={unit.chat!} token="tok" onCompleted={() => {}} onRefused={() => {}} draftDebounceMs={10} advanceDelayMs={0} />,
  );
}

beforeEach(() => {
  vi.unstubAllGlobals();
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('online labels', () => {
  it('the latest bot message gets the bucket’s questions; a required label blocks Send and Enter, with a hint; the label goes with the message', async () => {
    const user = userEvent.setup();
    const chat = labelling('turn_quality', true);
    const server = chatServer(annotatedUnit(chat), { ...draftRoute, 'POST /api/chat/u_c/messages': () => [202, { index: 2, sent_at: 'now' }] });
    render(<App search={LINK} />);
    (await server.stream()).state(chat);

    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 2" });
    const botMessage = within(log()).getAllByRole('listitem')[1];
    expect(botMessage).toContainElement(group);
    expect(botMessage).toHaveTextContent('Hello! How are you?');
    expect(within(group).getAllByRole('radio').map((r) => r.closest('label')!.textContent)).toEqual(['1', '2', '3', '4', '5']);
    expect(within(group).getByRole('group', { name: QUALITY })).toBeInTheDocument();

    await user.type(textbox(), 'Fine, thanks.');
    expect(sendButton()).toBeDisabled();
    const hint = screen.getByText(/Still to do before you go on/).closest('div')!;
    expect(hint).toHaveTextContent(`Partner's message 2: rate '${QUALITY}'`);
    expect(sendButton()).toHaveAttribute('aria-describedby', hint.id);
    await user.keyboard('{Enter}');
    expect(server.posts('messages')).toHaveLength(0);
    expect(textbox()).toHaveValue('Fine, thanks.');

    await user.click(within(group).getByRole('radio', { name: '4' }));
    expect(screen.queryByText(/Still to do before you go on/)).toBeNull();
    expect(sendButton()).toBeEnabled();
    await user.click(textbox());
    await user.keyboard('{Enter}');
    await waitFor(() => expect(server.posts('messages')).toHaveLength(1));
    expect(server.posts('messages')[0].body).toMatchObject({ text: 'Fine, thanks.', label: { Quality: 4 } });
    // Stored: the label shows as text, the questions are gone.
    expect(await within(log()).findByText('Quality: 4')).toBeInTheDocument();
    expect(screen.queryByRole('group', { name: /Your rating of/ })).toBeNull();
  });

  it('a multiselect label that is not required: Send is free; the ticked values go with the message', async () => {
    const user = userEvent.setup();
    const chat = labelling('issues', false);
    const server = chatServer(annotatedUnit(chat), { ...draftRoute, 'POST /api/chat/u_c/messages': () => [202, { index: 2, sent_at: 'now' }] });
    render(<App search={LINK} />);
    (await server.stream()).state(chat);
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 2" });
    expect(within(group).getAllByRole('checkbox').map((c) => c.closest('label')!.textContent)).toEqual([
      'Off topic',
      'Repeats itself',
      'States something false',
      'Asks a question back',
    ]);
    await user.click(within(group).getByRole('checkbox', { name: 'Asks a question back' }));
    await user.type(textbox(), 'Yes, I do.{Enter}');
    await waitFor(() => expect(server.posts('messages')).toHaveLength(1));
    expect(server.posts('messages')[0].body).toMatchObject({ label: ['asks_question'] });
  });

  it('a question tree label: the same renderer as the static page, checkbox questions start as "none of these"', async () => {
    const user = userEvent.setup();
    const chat = labelling('relevance', true);
    const server = chatServer(annotatedUnit(chat), { ...draftRoute, 'POST /api/chat/u_c/messages': () => [202, { index: 2, sent_at: 'now' }] });
    render(<App search={LINK} />);
    (await server.stream()).state(chat);
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 2" });
    const question = within(group).getByRole('group', { name: "Does Partner's reply follow from what You just said?" });
    await user.click(within(question).getByRole('radio', { name: 'Partly, it responds but drifts away.' }));
    expect(screen.getByText(/Still to do before you go on/).closest('div')).toHaveTextContent("answer 'Where does it drift?'");
    await user.click(within(group).getByRole('radio', { name: 'To something unrelated.' }));
    await user.type(textbox(), 'Hm.{Enter}');
    await waitFor(() => expect(server.posts('messages')).toHaveLength(1));
    expect((server.posts('messages')[0].body as { label: unknown }).label).toEqual({
      "Does SPEAKER_X's reply follow from what SPEAKER_Y just said?": {
        'Partly, it responds but drifts away.': { 'Where does it drift?': { 'To something unrelated.': {} } },
      },
      'Which problems does the reply have?': {},
    });
  });

  it('stored labels show as text; End chat waits for the last label and carries it', async () => {
    const user = userEvent.setup();
    const c = activeConversation(0, 'Partner', {
      turns_done: 1,
      can_end: true,
      respond_by: null,
      messages: [
        msg(0, 'worker', 'Hi!'),
        { ...msg(1, 'bot', 'Hello! How are you?'), labels: { Quality: 5 } },
        msg(2, 'worker', 'Fine.'),
        msg(3, 'bot', 'Good to hear.'),
      ],
    });
    const chat = chatState({ num_turns: 1, conversations: [c], annotations: online('turn_quality', true) });
    const ended = { ...chat, current: null, conversations: [{ ...c, status: 'ended' as const, can_end: false }] };
    const server = chatServer(annotatedUnit(chat), { ...draftRoute, 'POST /api/chat/u_c/end': () => [200, ended] });
    render(<App search={LINK} />);
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 4" });
    expect(within(log()).getAllByRole('listitem')[1]).toHaveTextContent('Your rating: Quality: 5');
    expect(screen.getAllByRole('group', { name: /Your rating of/ })).toHaveLength(1);
    const end = screen.getByRole('button', { name: 'End chat' });
    expect(end).toBeDisabled();
    expect(end).toHaveAccessibleDescription(`Still to do before you go on: Partner's message 4: rate '${QUALITY}'`);
    await user.click(within(group).getByRole('radio', { name: '2' }));
    await user.click(end);
    await waitFor(() => expect(server.posts('end')).toHaveLength(1));
    expect(server.posts('end')[0].body).toEqual({ label: { Quality: 2 } });
    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
  });

  it('unsent labels are saved in the draft under answers.online and restored after a reload', async () => {
    const user = userEvent.setup();
    const chat = labelling('turn_quality', true);
    const unit = annotatedUnit(chat);
    const server = chatServer(unit, draftRoute);
    const { unmount } = renderChat(unit);
    await user.click(await screen.findByRole('radio', { name: '3' }));
    await waitFor(() => expect(server.calls.filter((c) => c.method === 'PUT')).toHaveLength(1));
    const put = server.calls.find((c) => c.method === 'PUT')!;
    expect(put.url).toBe('/api/units/u_c/draft');
    expect(put.body).toEqual({ answers: { online: { '0': { '1': { Quality: 3 } } } }, position: { step: 0, finished: [], timings: [] } });
    unmount();

    const reloaded = annotatedUnit(chat, { answers: (put.body as { answers: Answers }).answers, position: { step: 0 } });
    renderChat(reloaded);
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 2" });
    expect(within(group).getByRole('radio', { name: '3' })).toBeChecked();
    await user.type(textbox(), 'Hello');
    expect(sendButton()).toBeEnabled();
  });

  it('a refused label (422) is shown with the label and the message comes back into the box', async () => {
    const user = userEvent.setup();
    const chat = labelling('turn_quality', true);
    const server = chatServer(annotatedUnit(chat), {
      ...draftRoute,
      'POST /api/chat/u_c/messages': () => [
        422,
        { error: "message 2: 'turn_quality' is not valid", problems: [{ bucket: 'turn_quality', turn: 1, message: "rate 'Quality' from 1 to 5" }] },
      ],
    });
    render(<App search={LINK} />);
    (await server.stream()).state(chat);
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 2" });
    await user.click(within(group).getByRole('radio', { name: '1' }));
    await user.type(textbox(), 'Hello{Enter}');
    const alert = await within(group).findByRole('alert');
    expect(alert).toHaveTextContent("Your rating was not accepted: message 2: 'turn_quality' is not valid");
    expect(alert).toHaveTextContent("rate 'Quality' from 1 to 5");
    expect(textbox()).toHaveValue('Hello');
    expect(screen.getAllByRole('alert')).toHaveLength(1);
  });
});
