import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { makeSampleUnit } from '../dev/sampleUnit';
import { renderStep } from './harness';

const unit = makeSampleUnit();
const d1 = 'd_one';

function turnGroup(n: number) {
  return screen.getByRole('group', { name: `Turn ${n}` });
}

describe('button_flow', () => {
  const step = { dialogueKey: d1, bucketName: 'relevance' };
  const Q1 = "Is SPEAKER_X's response relevant to what SPEAKER_Y said?";
  const Q2 = 'Does the response ask SPEAKER_Y a question?';

  it('shows the whole dialogue, marks target turns and opens the first one only', () => {
    const { container } = renderStep(unit, step);
    expect(container.querySelector('[data-dialogue-key="d_one"]')).not.toBeNull();
    expect(screen.getByText('Hello there! I just got back from a hiking trip.')).toBeInTheDocument();
    const groups = container.querySelectorAll('[role="group"][data-turn-index]');
    expect([...groups].map((g) => g.getAttribute('data-turn-index'))).toEqual(['1', '3', '5']);
    expect(within(turnGroup(2)).getByRole('group', { name: "Is Bot's response relevant to what Partner said?" })).toBeInTheDocument();
    expect(within(turnGroup(4)).queryByRole('radio')).toBeNull();
    expect(within(turnGroup(4)).getByRole('button', { name: 'Answer turn 4' })).toBeInTheDocument();
  });

  it('stores the chosen path with raw texts; answering nested questions; radio change clears subtree', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    const g = turnGroup(2);
    await user.click(within(g).getByRole('radio', { name: 'No, it is off the point.' }));
    expect(r.value('1')).toEqual({ [Q1]: { 'No, it is off the point.': {} } });
    await user.click(within(g).getByRole('radio', { name: 'It ignores what Partner said.' }));
    expect(r.value('1')).toEqual({ [Q1]: { 'No, it is off the point.': { 'What is wrong with it?': { 'It ignores what SPEAKER_Y said.': {} } } } });
    await user.click(within(g).getByRole('radio', { name: 'Yes, it follows on naturally.' }));
    expect(r.value('1')).toEqual({ [Q1]: { 'Yes, it follows on naturally.': {} } });
    expect(within(g).queryByRole('group', { name: 'What is wrong with it?' })).toBeNull();
  });

  it('completing a turn with the mouse advances to the next target turn', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    await user.click(within(turnGroup(2)).getByRole('radio', { name: 'Yes, it follows on naturally.' }));
    await user.click(within(turnGroup(2)).getByRole('radio', { name: 'No.' }));
    expect(r.value('1')).toEqual({ [Q1]: { 'Yes, it follows on naturally.': {} }, [Q2]: { 'No.': {} } });
    await waitFor(() => expect(within(turnGroup(4)).getAllByRole('radio').length).toBeGreaterThan(0));
    expect(within(turnGroup(2)).queryByRole('radio')).toBeNull();
    expect(within(turnGroup(2)).getByText('Answered')).toBeInTheDocument();
    await waitFor(() => expect(turnGroup(4)).toHaveFocus());
  });

  it('clicking a collapsed target turn (message or button) opens it', async () => {
    const user = userEvent.setup();
    renderStep(unit, step);
    await user.click(screen.getByText('Do you plan to go again next month?'));
    expect(within(turnGroup(6)).getAllByRole('radio').length).toBe(4);
    expect(within(turnGroup(2)).queryByRole('radio')).toBeNull();
    await user.click(within(turnGroup(4)).getByRole('button', { name: 'Answer turn 4' }));
    expect(within(turnGroup(4)).getAllByRole('radio').length).toBe(4);
  });

  it('help links open the bucket instructions through a generated id', async () => {
    const user = userEvent.setup();
    const onHelp = vi.fn();
    const { container } = renderStep(unit, step, {}, { onHelp });
    const helps = within(turnGroup(2)).getAllByRole('button', { name: 'Help about this question' });
    expect(helps).toHaveLength(2);
    expect(helps[0]).toHaveAttribute('aria-controls', 'test-dialog');
    await user.click(helps[0]);
    expect(onHelp).toHaveBeenCalled();
    for (const el of container.querySelectorAll('[id]')) {
      expect(el.id).not.toContain(' ');
    }
  });
});

describe('nondetails_button_flow (checkbox questions and _dep_)', () => {
  const step = { dialogueKey: d1, bucketName: 'facts' };
  const FQ = 'Does the response use facts?';
  const QQ = 'Does the response contain a question?';
  const EQ = 'Is the question easy to answer?';

  it('opening a turn records {} for its checkbox questions; checking opens nested questions', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    await waitFor(() => expect(r.value('1')).toEqual({ [FQ]: {} }));
    const g = turnGroup(2);
    await user.click(within(g).getByRole('checkbox', { name: 'It states at least one fact.' }));
    expect(r.value('1')).toEqual({ [FQ]: { 'It states at least one fact.': {} } });
    await user.click(within(g).getByRole('radio', { name: 'No, at least one is wrong.' }));
    expect(r.value('1')).toEqual({ [FQ]: { 'It states at least one fact.': { 'Are all the facts correct?': { 'No, at least one is wrong.': {} } } } });
    await user.click(within(g).getByRole('checkbox', { name: 'It states at least one fact.' }));
    expect(r.value('1')).toEqual({ [FQ]: {} });
  });

  it('a _dep_ question appears only while its condition holds and its answer is dropped when hidden', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    const g = turnGroup(2);
    expect(within(g).queryByRole('group', { name: EQ })).toBeNull();
    const q = within(g).getByRole('group', { name: QQ });
    await user.click(within(q).getByRole('radio', { name: 'Yes.' }));
    const easy = within(g).getByRole('group', { name: EQ });
    await user.click(within(easy).getByRole('radio', { name: 'No.' }));
    expect(r.value('1')).toEqual({ [FQ]: {}, [QQ]: { 'Yes.': {} }, [EQ]: { 'No.': {} } });
    // Complete, but its checkbox question was not looked at: the turn stays open ...
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(within(g).getByRole('group', { name: FQ })).toBeInTheDocument();
    // ... until the worker confirms "None of these"; then the page moves on to turn 4.
    await user.click(within(within(g).getByRole('group', { name: FQ })).getByRole('checkbox', { name: 'None of these' }));
    expect(r.value('1')).toEqual({ [FQ]: {}, [QQ]: { 'Yes.': {} }, [EQ]: { 'No.': {} } });
    await user.click(await within(g).findByRole('button', { name: 'Change turn 2' }));
    await user.click(within(within(g).getByRole('group', { name: QQ })).getByRole('radio', { name: 'No.' }));
    expect(within(g).queryByRole('group', { name: EQ })).toBeNull();
    expect(r.value('1')).toEqual({ [FQ]: {}, [QQ]: { 'No.': {} } });
  });
});

describe('nondetails_nonhelp_button_flow', () => {
  it('identifier questions get a readable (hidden) legend, no help links; values use raw keys', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, { dialogueKey: d1, bucketName: 'flags' });
    const g = turnGroup(2);
    expect(within(g).getByRole('group', { name: 'Rude' })).toBeInTheDocument();
    expect(within(g).queryByRole('button', { name: /help/i })).toBeNull();
    await user.click(within(g).getByRole('checkbox', { name: 'This response is rude.' }));
    expect(r.value('1')).toEqual({ rude_q: { 'This response is rude.': {} }, repeat_q: {} });
  });
});

describe('multiselect', () => {
  const step = { dialogueKey: d1, bucketName: 'labels' };

  it('filters options by the turn speaker and stores a list of values', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    const userTurn = turnGroup(1);
    const botTurn = turnGroup(2);
    // On a user turn SPEAKER_X is the user and SPEAKER_Y the bot.
    expect(within(userTurn).getAllByRole('checkbox').map((c) => c.closest('label')!.textContent)).toEqual([
      'Greets Bot',
      'Goes off topic',
    ]);
    expect(within(botTurn).getAllByRole('checkbox').map((c) => c.closest('label')!.textContent)).toEqual([
      'Greets Partner',
      'Asks a question',
    ]);
    await waitFor(() => expect(r.bucketAnswers()).toEqual({ '0': [], '1': [], '2': [], '3': [] }));
    await user.click(within(botTurn).getByRole('checkbox', { name: 'Asks a question' }));
    await user.click(within(botTurn).getByRole('checkbox', { name: 'Greets Partner' }));
    expect(r.value('1')).toEqual(['greets', 'asks']);
    await user.click(within(botTurn).getByRole('checkbox', { name: 'Greets Partner' }));
    expect(r.value('1')).toEqual(['asks']);
    expect(within(turnGroup(1)).getByRole('group', { name: 'Tick every label that fits:' })).toBeInTheDocument();
  });
});

describe('likert-5-turn', () => {
  it('a 1–5 radio scale per option, anchors as description, keyed by option label', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, { dialogueKey: d1, bucketName: 'fluency_turn' });
    const g = turnGroup(2);
    const scale = within(g).getByRole('group', { name: 'How fluent is this response?' });
    expect(within(scale).getAllByRole('radio').map((x) => x.getAttribute('value'))).toEqual(['1', '2', '3', '4', '5']);
    expect(within(scale).getByRole('radio', { name: '1' })).toBeInTheDocument();
    expect(scale).toHaveAccessibleDescription('1 = hard to read 5 = perfectly fluent');
    await user.click(within(scale).getByRole('radio', { name: '4' }));
    expect(r.value('1')).toEqual({ Fluent: 4 });
  });

  it('number keys 1–5 set the focused scale', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, { dialogueKey: d1, bucketName: 'fluency_turn' });
    const scale = within(turnGroup(4)).getByRole('group', { name: 'How fluent is this response?' });
    within(scale).getByRole('radio', { name: '1' }).focus();
    await user.keyboard('3');
    expect(r.value('3')).toEqual({ Fluent: 3 });
    expect(within(scale).getByRole('radio', { name: '3' })).toHaveFocus();
    expect(within(scale).getByRole('radio', { name: '3' })).toBeChecked();
  });
});

describe('foreach-5-select', () => {
  it('a scale per option on each target turn, keyed by option value', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, { dialogueKey: d1, bucketName: 'aspects' });
    const g = turnGroup(6);
    await user.click(within(within(g).getByRole('group', { name: 'Kind' })).getByRole('radio', { name: '2' }));
    await user.click(within(within(g).getByRole('group', { name: 'Clear' })).getByRole('radio', { name: '5' }));
    expect(r.value('5')).toEqual({ clear: 5, kind: 2 });
    expect(Object.keys(r.value('5') as object)).toEqual(['clear', 'kind']);
  });
});

describe('likert-5-dialogue and foreach-5-select-dialogue', () => {
  it('likert-5-dialogue stores {option_label: n} under "dialogue"', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, { dialogueKey: d1, bucketName: 'overall' });
    expect(screen.queryAllByRole('group', { name: /^Turn / })).toHaveLength(0);
    const q = screen.getByRole('group', { name: "How engaging were Bot's responses overall?" });
    await user.click(within(q).getByRole('radio', { name: '5' }));
    expect(r.value('dialogue')).toEqual({ Engaging: 5 });
    expect(screen.getAllByText(/= not at all/).length).toBe(2);
  });

  it('foreach-5-select-dialogue stores {option_value: n} under "dialogue"', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, { dialogueKey: d1, bucketName: 'dialogue_aspects' });
    await user.click(within(screen.getByRole('group', { name: 'Friendly' })).getByRole('radio', { name: '1' }));
    expect(r.value('dialogue')).toEqual({ friendly: 1 });
  });
});

describe('comparative', () => {
  it('shows Dialogue 1 (turns) and Dialogue 2 (turns2) and stores the chosen option string', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, { dialogueKey: 'd_two', bucketName: 'which_better' });
    const left = screen.getByRole('region', { name: 'Dialogue 1' });
    const right = screen.getByRole('region', { name: 'Dialogue 2' });
    expect(left).toHaveAttribute('data-dialogue-key', 'd_two');
    expect(within(left).getByText('Hello there! I just got back from a hiking trip.')).toBeInTheDocument();
    expect(within(right).getByText('Hi, can you recommend a book?')).toBeInTheDocument();
    const q = screen.getByRole('group', { name: 'In which conversation was Bot more helpful?' });
    await user.click(within(q).getByRole('radio', { name: 'The right one' }));
    expect(r.value('dialogue')).toBe('The right one');
  });
});

describe('security and display', () => {
  it('dialogue and persona text render as literal text, never HTML', () => {
    const evil = '<img src=x onerror=alert(1)>';
    const u = makeSampleUnit();
    u.dialogues[0] = {
      ...u.dialogues[0],
      turns: u.dialogues[0].turns.map((t) => (t.index === 1 ? { ...t, text: evil } : t)),
      persona: [evil],
    };
    const { container } = renderStep(u, { dialogueKey: d1, bucketName: 'labels' });
    expect(container.querySelector('img')).toBeNull();
    expect(screen.getAllByText(evil)).toHaveLength(2);
  });

  it('SPEAKER_X/SPEAKER_Y are substituted in displayed texts and turn speakers', () => {
    renderStep(unit, { dialogueKey: d1, bucketName: 'relevance' });
    expect(screen.queryByText(/SPEAKER_/)).toBeNull();
    expect(screen.getAllByText('Bot').length).toBeGreaterThan(0);
    expect(screen.getAllByText('Partner').length).toBeGreaterThan(0);
  });
});

describe('SPEAKER_X is the speaker of the annotated turn', () => {
  it('a tree bucket on user and bot turns names each turn its own way', async () => {
    const allTurns = {
      ...unit,
      buckets: { ...unit.buckets, relevance: { ...unit.buckets.relevance, targets: { [d1]: [0, 1] } } },
    };
    const user = userEvent.setup();
    renderStep(allTurns, { dialogueKey: d1, bucketName: 'relevance' });
    // turn 1 is the user's: X = Partner, Y = Bot
    expect(
      within(turnGroup(1)).getByRole('group', { name: "Is Partner's response relevant to what Bot said?" }),
    ).toBeInTheDocument();
    await user.click(within(turnGroup(2)).getByRole('button', { name: 'Answer turn 2' }));
    expect(
      within(turnGroup(2)).getByRole('group', { name: "Is Bot's response relevant to what Partner said?" }),
    ).toBeInTheDocument();
  });
});

describe('checkbox questions are seen before a turn moves on', () => {
  const step = { dialogueKey: d1, bucketName: 'facts' };
  const FQ = 'Does the response use facts?';
  const QQ = 'Does the response contain a question?';
  const pause = () => new Promise((resolve) => setTimeout(resolve, 20));
  /** Clicks the option `name` of question `question` inside `container`. */
  const pick = (
    user: ReturnType<typeof userEvent.setup>,
    container: HTMLElement,
    question: string,
    role: 'radio' | 'checkbox',
    name: string,
  ) => user.click(within(within(container).getByRole('group', { name: question })).getByRole(role, { name }));

  it('answering the radio question with the mouse keeps the turn open while a checkbox question is untouched', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    const g = turnGroup(2);
    await pick(user, g, QQ, 'radio', 'No.');
    await pause();
    const fq = within(g).getByRole('group', { name: FQ });
    expect(fq).toBeInTheDocument();
    // confirming "None of these": every question is seen, the page moves on
    await user.click(within(fq).getByRole('checkbox', { name: 'None of these' }));
    expect(r.value('1')).toEqual({ [FQ]: {}, [QQ]: { 'No.': {} } });
    await within(g).findByRole('button', { name: 'Change turn 2' });
    expect(within(turnGroup(4)).getAllByRole('radio').length).toBeGreaterThan(0);
  });

  it('a tick counts as seen: answering what it opened moves on', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    const g = turnGroup(2);
    await pick(user, g, QQ, 'radio', 'No.');
    const fq = within(g).getByRole('group', { name: FQ });
    await user.click(within(fq).getByRole('checkbox', { name: 'It states at least one fact.' }));
    await pause();
    expect(within(fq).getByRole('checkbox', { name: 'None of these' })).not.toBeChecked();
    await pick(user, g, 'Are all the facts correct?', 'radio', 'Yes.');
    await within(g).findByRole('button', { name: 'Change turn 2' });
    expect(r.value('1')).toEqual({
      [FQ]: { 'It states at least one fact.': { 'Are all the facts correct?': { 'Yes.': {} } } },
      [QQ]: { 'No.': {} },
    });
  });

  it('confirming "None of these" first, then the radio answer, moves on', async () => {
    const user = userEvent.setup();
    const r = renderStep(unit, step);
    const g = turnGroup(2);
    await pick(user, g, FQ, 'checkbox', 'None of these');
    await pause();
    expect(within(g).getByRole('group', { name: QQ })).toBeInTheDocument();
    await pick(user, g, QQ, 'radio', 'No.');
    await within(g).findByRole('button', { name: 'Change turn 2' });
    expect(r.value('1')).toEqual({ [FQ]: {}, [QQ]: { 'No.': {} } });
  });
});
