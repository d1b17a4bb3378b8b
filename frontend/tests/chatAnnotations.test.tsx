import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/App';
import { offlineUnit, restoreChatDraft } from '../src/chatAnnotations';
import { ChatUnit } from '../src/components/ChatUnit';
import type { Answers, ChatAnnotations, ChatState, Conversation, OfflineEntry, SubmitTimings, Unit } from '../src/types';
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

    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 1" });
    const botMessage = within(log()).getAllByRole('listitem')[1];
    expect(botMessage).toContainElement(group);
    expect(botMessage).toHaveTextContent('Hello! How are you?');
    expect(within(group).getAllByRole('radio').map((r) => r.closest('label')!.textContent)).toEqual(['1', '2', '3', '4', '5']);
    expect(within(group).getByRole('group', { name: QUALITY })).toBeInTheDocument();

    await user.type(textbox(), 'Fine, thanks.');
    expect(sendButton()).toBeDisabled();
    const hint = screen.getByText(/Still to do before you go on/).closest('div')!;
    expect(hint).toHaveTextContent(`Partner's message 1: rate '${QUALITY}'`);
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
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 1" });
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
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 1" });
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
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 2" });
    expect(within(log()).getAllByRole('listitem')[1]).toHaveTextContent('Your rating: Quality: 5');
    expect(screen.getAllByRole('group', { name: /Your rating of/ })).toHaveLength(1);
    const end = screen.getByRole('button', { name: 'End chat' });
    expect(end).toBeDisabled();
    expect(end).toHaveAccessibleDescription(`Still to do before you go on: Partner's message 2: rate '${QUALITY}'`);
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
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 1" });
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
    const group = await screen.findByRole('group', { name: "Your rating of Partner's message 1" });
    await user.click(within(group).getByRole('radio', { name: '1' }));
    await user.type(textbox(), 'Hello{Enter}');
    const alert = await within(group).findByRole('alert');
    expect(alert).toHaveTextContent("Your rating was not accepted: message 2: 'turn_quality' is not valid");
    expect(alert).toHaveTextContent("rate 'Quality' from 1 to 5");
    expect(textbox()).toHaveValue('Hello');
    expect(screen.getAllByRole('alert')).toHaveLength(1);
  });
});

/** Conversation `position` with `partner`, all turns written: "Hi!", then two exchanges. */
function finishedConversation(position: number, partner: string, words: [string, string, string]): Conversation {
  return activeConversation(position, partner, {
    turns_done: 1,
    can_end: true,
    respond_by: null,
    messages: [msg(0, 'worker', 'Hi!'), msg(1, 'bot', words[0]), msg(2, 'worker', words[1]), msg(3, 'bot', words[2])],
  });
}

function ended(c: Conversation): Conversation {
  return { ...c, status: 'ended', can_end: false };
}

/** The entry after a single chat: a dialogue-level and a turn-level bucket; targets once ended. */
function singleEntry(targets: boolean): OfflineEntry[] {
  return [
    {
      after: 0,
      dialogues: [
        {
          key: 'c0',
          conversation: 0,
          annotation_tasks: ['overall_quality', 'turn_quality'],
          targets: targets ? { overall_quality: [], turn_quality: [1, 3] } : null,
        },
      ],
    },
  ];
}

const A = finishedConversation(0, 'Partner A', ['Hello from A.', 'I like cats.', 'Cats are great.']);
const B = finishedConversation(1, 'Partner B', ['Hello from B.', 'I like dogs.', 'Dogs are loyal.']);

/** After chat 1: overall quality; after chat 2: overall quality and the comparison (B left, A right). */
function pairedEntries(targets: boolean): OfflineEntry[] {
  const t = targets ? { overall_quality: [] } : null;
  return [
    { after: 0, dialogues: [{ key: 'c0', conversation: 0, annotation_tasks: ['overall_quality'], targets: t }] },
    {
      after: 1,
      dialogues: [
        { key: 'c1', conversation: 1, annotation_tasks: ['overall_quality'], targets: targets ? t : null },
        { key: 'c0_c1', conversation: null, left: 1, right: 0, annotation_tasks: ['preference'], targets: targets ? { preference: [] } : null },
      ],
    },
  ];
}

const noOnline = (offline: OfflineEntry[]): ChatAnnotations => ({ online: null, offline });
const submits = (server: ReturnType<typeof chatServer>) => server.calls.filter((c) => c.url === '/api/units/u_c/submit');
const turnGroup = (n: number) => screen.getByRole('group', { name: `Turn ${n}` });

describe('offline annotation', () => {
  it('after End chat, the conversation is annotated step by step with the static renderers, then submitted', async () => {
    const user = userEvent.setup();
    const c = finishedConversation(0, 'Partner', ['Hello! How are you?', 'Fine. Do you like music?', 'I love jazz.']);
    const chat = chatState({ current: 0, conversations: [c], annotations: noOnline(singleEntry(false)) });
    const done = chatState({ current: null, conversations: [ended(c)], annotations: noOnline(singleEntry(true)) });
    const server = chatServer(annotatedUnit(chat), { ...draftRoute, 'POST /api/chat/u_c/end': () => [200, done] });
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'End chat' }));

    const heading = await screen.findByRole('heading', { name: 'Overall quality' });
    await waitFor(() => expect(heading).toHaveFocus());
    expect(screen.getByText('Your chat with Partner')).toBeInTheDocument();
    expect(screen.getByText('Step 1 of 2')).toBeInTheDocument();
    const dialogue = screen.getByRole('region', { name: 'Dialogue' });
    expect(within(dialogue).getAllByRole('listitem').map((li) => li.querySelector('.speaker')!.textContent)).toEqual([
      'You',
      'Partner',
      'You',
      'Partner',
    ]);
    expect(within(dialogue).getByText('I love jazz.')).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Instructions' })).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Back' })).toBeDisabled();
    const next = screen.getByRole('button', { name: 'Next' });
    expect(next).toBeDisabled();
    expect(next).toHaveAccessibleDescription(`Still to do: Rate '${OVERALL}'`);
    await user.click(within(screen.getByRole('group', { name: OVERALL })).getByRole('radio', { name: '4' }));
    await user.click(next);

    expect(await screen.findByRole('heading', { name: 'Turn quality' })).toHaveFocus();
    expect(screen.getAllByRole('group', { name: /^Turn \d$/ }).map((g) => g.getAttribute('data-turn-index'))).toEqual(['1', '3']);
    await user.click(within(turnGroup(2)).getByRole('radio', { name: '3' }));
    await user.click(within(turnGroup(4)).getByRole('radio', { name: '5' }));
    await user.click(screen.getByRole('button', { name: 'Submit' }));

    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    const body = submits(server)[0].body as { answers: Answers; timings: SubmitTimings };
    expect(body.answers).toEqual({
      c0: { overall_quality: { dialogue: { Overall: 4 } }, turn_quality: { '1': { Quality: 3 }, '3': { Quality: 5 } } },
    });
    expect(body.timings.steps.map((s) => [s.dialogue, s.bucket])).toEqual([
      ['c0', 'overall_quality'],
      ['c0', 'turn_quality'],
    ]);
  });

  it('paired: chat 1, its steps, Start the next chat, chat 2, its steps with the comparison (left/right as the entry says), submit', async () => {
    const user = userEvent.setup();
    const first = pairedState({ conversations: [A, conversation(1, 'Partner B')], annotations: noOnline(pairedEntries(false)) });
    const afterFirst = pairedState({
      current: 1,
      conversations: [ended(A), conversation(1, 'Partner B')],
      annotations: noOnline([pairedEntries(true)[0], pairedEntries(false)[1]]),
    });
    const inSecond = { ...afterFirst, conversations: [ended(A), B] };
    const done = pairedState({ current: null, conversations: [ended(A), ended(B)], annotations: noOnline(pairedEntries(true)) });
    let ends = 0;
    const server = chatServer(annotatedUnit(first), {
      ...draftRoute,
      'POST /api/chat/u_c/end': () => [200, ++ends === 1 ? afterFirst : done],
      'POST /api/chat/u_c/start': () => [200, inSecond],
    });
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'End chat' }));

    expect(await screen.findByRole('heading', { name: 'Overall quality' })).toBeInTheDocument();
    expect(screen.getByText('Your chat with Partner A')).toBeInTheDocument();
    expect(screen.getByText('Cats are great.')).toBeInTheDocument();
    await user.click(screen.getByRole('radio', { name: '3' }));
    await user.click(screen.getByRole('button', { name: 'Continue' }));

    expect(await screen.findByRole('heading', { name: 'Chat 1 of 2 is done.' })).toHaveFocus();
    await waitFor(() =>
      expect(server.calls.filter((c) => c.method === 'PUT').at(-1)!.body).toMatchObject({
        answers: { c0: { overall_quality: { dialogue: { Overall: 3 } } }, online: {} },
        position: { step: 0, finished: [0] },
      }),
    );
    await user.click(screen.getByRole('button', { name: 'Start the next chat' }));
    expect(await screen.findByRole('log', { name: 'Conversation with Partner B' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'End chat' }));

    expect(await screen.findByText('Your chat with Partner B')).toBeInTheDocument();
    expect(screen.getByText('Step 1 of 2')).toBeInTheDocument();
    await user.click(screen.getByRole('radio', { name: '5' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));

    expect(await screen.findByRole('heading', { name: 'Preference' })).toBeInTheDocument();
    expect(screen.getByText('Your chats with Partner B (left) and Partner A (right)')).toBeInTheDocument();
    expect(within(screen.getByRole('region', { name: 'Dialogue 1' })).getByText('Dogs are loyal.')).toBeInTheDocument();
    expect(within(screen.getByRole('region', { name: 'Dialogue 2' })).getByText('Cats are great.')).toBeInTheDocument();
    const question = screen.getByRole('group', { name: 'In which conversation was Partner the better partner?' });
    await user.click(within(question).getByRole('radio', { name: 'Dialogue 2 (right)' }));
    await user.click(screen.getByRole('button', { name: 'Submit' }));

    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    expect(submits(server)).toHaveLength(1);
    expect((submits(server)[0].body as { answers: Answers }).answers).toEqual({
      c0: { overall_quality: { dialogue: { Overall: 3 } } },
      c1: { overall_quality: { dialogue: { Overall: 5 } } },
      c0_c1: { preference: { dialogue: 'Dialogue 2 (right)' } },
    });
  });

  it('a reload resumes the offline steps from the draft; after the finished steps of chat 1 it shows the screen before chat 2', async () => {
    const user = userEvent.setup();
    const c = ended(finishedConversation(0, 'Partner', ['Hello!', 'Fine.', 'Good.']));
    const chat = chatState({ current: null, conversations: [c], annotations: noOnline(singleEntry(true)) });
    chatServer(annotatedUnit(chat, { answers: { c0: { overall_quality: { dialogue: { Overall: 2 } } } }, position: { step: 2, finished: [] } }), draftRoute);
    const { unmount } = render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Turn quality' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Back' }));
    expect(within(await screen.findByRole('group', { name: OVERALL })).getByRole('radio', { name: '2' })).toBeChecked();
    unmount();

    const between = pairedState({
      current: 1,
      conversations: [ended(A), conversation(1, 'Partner B')],
      annotations: noOnline([pairedEntries(true)[0], pairedEntries(false)[1]]),
    });
    const draft = { answers: { c0: { overall_quality: { dialogue: { Overall: 3 } } } }, position: { step: 0, finished: [0] } };
    const server = chatServer(annotatedUnit(between, draft), draftRoute);
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Chat 1 of 2 is done.' })).toBeInTheDocument();
    expect(server.posts('start')).toHaveLength(0);
  });

  it('a refused submit (422) shows the problems by step, opens the first one, and submits again', async () => {
    const user = userEvent.setup();
    const c = ended(finishedConversation(0, 'Partner', ['Hello!', 'Fine.', 'Good.']));
    const chat = chatState({ current: null, conversations: [c], annotations: noOnline(singleEntry(true)) });
    const answers = { c0: { overall_quality: { dialogue: { Overall: 2 } }, turn_quality: { '1': { Quality: 4 }, '3': { Quality: 4 } } } };
    let tries = 0;
    const server = chatServer(annotatedUnit(chat, { answers, position: { step: 0, finished: [0] } }), {
      ...draftRoute,
      'POST /api/units/u_c/submit': () =>
        ++tries === 1
          ? [
              422,
              {
                error: "dialogue 1, turn 4, 'turn_quality': rate 'Quality'",
                problems: [
                  { dialogue: 'c0', bucket: 'turn_quality', turn: 3, question: null, message: "rate 'Quality'" },
                  { dialogue: 'c0', bucket: 'overall_quality', turn: null, question: null, message: "rate 'Overall'" },
                ],
              },
            ]
          : [200, { status: 'completed', completion_code: 'CHAT-7' }],
    });
    render(<App search={LINK} />);
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent("Your answers were not accepted: dialogue 1, turn 4, 'turn_quality': rate 'Quality'");
    expect(alert).toHaveTextContent("Step 2, Turn 4: rate 'Quality'");
    expect(alert).toHaveTextContent("Step 1: rate 'Overall'");
    expect(screen.getByRole('heading', { name: 'Turn quality' })).toBeInTheDocument();
    await user.click(within(alert).getByRole('button', { name: 'Go to step 1' }));
    expect(await screen.findByRole('heading', { name: 'Overall quality' })).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await user.click(await screen.findByRole('button', { name: 'Submit' }));
    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    expect(submits(server)).toHaveLength(2);
    expect((submits(server)[1].body as { client_id: string }).client_id).toBe((submits(server)[0].body as { client_id: string }).client_id);
  });

  it('a unit without annotations saves no draft and sends no label', async () => {
    const user = userEvent.setup();
    const chat = chatState({ conversations: [activeConversation(0, 'Partner')] });
    const server = chatServer(annotatedUnit(chat), { ...draftRoute, 'POST /api/chat/u_c/messages': () => [202, { index: 2, sent_at: 'now' }] });
    renderChat(annotatedUnit(chat));
    await user.type(await screen.findByRole('textbox', { name: 'Your message' }), 'Hello{Enter}');
    await waitFor(() => expect(server.posts('messages')).toHaveLength(1));
    expect(server.posts('messages')[0].body).not.toHaveProperty('label');
    expect(screen.queryByRole('group', { name: /Your rating of/ })).toBeNull();
    await new Promise((r) => setTimeout(r, 50));
    expect(server.calls.filter((c) => c.method === 'PUT')).toHaveLength(0);
  });
});

describe('building the offline unit', () => {
  it('turns come from the messages (worker = user, bot = system, index kept); a comparison puts left in turns, right in turns2', () => {
    const chat = pairedState({ current: null, conversations: [ended(A), ended(B)], annotations: noOnline(pairedEntries(true)) });
    const unit = offlineUnit(annotatedUnit(chat), chat, pairedEntries(true)[1].dialogues);
    expect(unit.dialogues.map((d) => d.key)).toEqual(['c1', 'c0_c1']);
    expect(unit.dialogues[0].turns[1]).toEqual({ index: 1, speaker: 'system', text: 'Hello from B.' });
    expect(unit.dialogues[0].turns2).toBeNull();
    expect(unit.dialogues[1].turns.map((t) => t.text)).toEqual(B.messages.map((m) => m.text));
    expect(unit.dialogues[1].turns2!.map((t) => t.text)).toEqual(A.messages.map((m) => m.text));
    expect(Object.keys(unit.buckets)).toEqual(['overall_quality', 'preference']);
  });

  it('turn-level targets come from the entry; the draft keeps only what fits the unit', () => {
    const c = ended(finishedConversation(0, 'Partner', ['Hello!', 'Fine.', 'Good.']));
    const chat = chatState({ current: null, conversations: [c], annotations: { online: { bucket: 'turn_quality', required: true }, offline: singleEntry(true) } });
    expect(offlineUnit(annotatedUnit(chat), chat, singleEntry(true)[0].dialogues).buckets.turn_quality.targets).toEqual({ c0: [1, 3] });
    const restored = restoreChatDraft(
      annotatedUnit(chat, {
        answers: { c0: { turn_quality: { '1': { Quality: 9 }, '2': { Quality: 1 }, '3': { Quality: 2 } } }, gone: {}, online: { '0': { '3': { Quality: 4 } } } },
        position: { step: 1, finished: [0, 'x'] },
      }),
      chat,
    );
    expect(restored.answers).toEqual({ c0: { turn_quality: { '1': {}, '3': { Quality: 2 } } } });
    expect(restored.finished).toEqual([0]);
    // The conversation ended: its labels can no longer be sent.
    expect(restored.online).toEqual({});
  });
});
