import { render, screen, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { makeSampleUnit } from '../dev/sampleUnit';
import { App } from '../src/App';
import {
  checkAnnouncement,
  checkBody,
  endsDialogue,
  lastStepOf,
  needsCheck,
  screeningIntro,
  selectionText,
  stableJson,
} from '../src/screening';
import type { CheckResult, Unit } from '../src/types';

type Route = (body: unknown) => [number, unknown];
interface Call {
  method: string;
  url: string;
  body: unknown;
}

function fakeServer(routes: Record<string, Route>) {
  const calls: Call[] = [];
  vi.stubGlobal(
    'fetch',
    vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
      const url = String(input);
      const method = init?.method ?? 'GET';
      const body = init?.body ? JSON.parse(String(init.body)) : undefined;
      calls.push({ method, url, body });
      const route = routes[`${method} ${url}`];
      const [status, payload] = route ? route(body) : [404, { error: 'not found' }];
      return new Response(JSON.stringify(payload), { status, headers: { 'Content-Type': 'application/json' } });
    }),
  );
  return calls;
}

const LINK = '?worker_id=w1&assignment_id=a1';

/** A screening unit: two training dialogues with one multiselect step each. */
function trainingUnit(): Unit {
  const base = makeSampleUnit();
  return {
    ...base,
    unit_id: 'u_train',
    kind: 'screening',
    seconds_remaining: null,
    dialogues: [
      { ...base.dialogues[0], annotation_tasks: ['labels'] },
      { ...base.dialogues[0], key: 'd_two', persona: null, annotation_tasks: ['labels'] },
    ],
    buckets: { labels: { ...base.buckets.labels, targets: { d_one: [1], d_two: [1, 3] } } },
    screening: { dialogues: 2, graded: [{ position: 2, key: 'd_two', allowed_mistakes: 1 }] },
  };
}

function realUnit(): Unit {
  const base = makeSampleUnit();
  return { ...base, unit_id: 'u_real', kind: 'annotation', seconds_remaining: null };
}

const WRONG: CheckResult = {
  dialogue: 'd_one',
  first_check: true,
  mistakes: 1,
  counted_mistakes: 1,
  corrected: false,
  wrong: [
    {
      turn: 1,
      yours: [],
      correct: [{ question: 'Tick every label that fits:', answers: ['Greets SPEAKER_Y', 'Asks a question'] }],
      explanation: 'SPEAKER_X greets and asks <img src=x onerror=alert(1)>',
    },
  ],
};

function ok(key: string, first = true): CheckResult {
  return { dialogue: key, first_check: first, mistakes: 0, counted_mistakes: first ? 0 : 1, corrected: true, wrong: [] };
}

function trainingRoutes(outcome: { passed: boolean; message: string | null }, extra: Record<string, Route> = {}) {
  let claims = 0;
  const checks: Record<string, number> = {};
  const routes: Record<string, Route> = {
    'POST /api/claim': () => {
      claims += 1;
      const unit = claims === 1 ? 'u_train' : 'u_real';
      return [200, { token: 'tok', unit_id: unit, status: 'assigned' }];
    },
    'GET /api/units/u_train': () => [200, trainingUnit()],
    'GET /api/units/u_real': () => [200, realUnit()],
    'PUT /api/units/u_train/draft': () => [200, { saved_at: 'now' }],
    'POST /api/units/u_train/dialogues/d_one/check': () => {
      checks.d_one = (checks.d_one ?? 0) + 1;
      return [200, checks.d_one === 1 ? WRONG : ok('d_one', false)];
    },
    'POST /api/units/u_train/dialogues/d_two/check': () => [200, ok('d_two')],
    'POST /api/units/u_train/submit': () => [200, { status: 'completed', completion_code: null, screening: outcome }],
    ...extra,
  };
  return routes;
}

beforeEach(() => vi.unstubAllGlobals());
afterEach(() => vi.unstubAllGlobals());

describe('screening logic', () => {
  it('the intro says how many dialogues and what passing needs, from the payload', () => {
    expect(screeningIntro({ dialogues: 3, graded: [{ position: 3, key: 'k', allowed_mistakes: 2 }] })).toEqual({
      count: 'Before the real task, you label 3 training dialogues.',
      pass: ['To pass, label training dialogue 3 of 3 with at most 2 mistakes at your first check.'],
    });
    const one = screeningIntro({ dialogues: 1, graded: [{ position: 1, key: 'k', allowed_mistakes: 0 }] });
    expect(one.count).toBe('Before the real task, you label 1 training dialogue.');
    expect(one.pass[0]).toContain('with no mistakes');
    expect(screeningIntro({ dialogues: 2, graded: [{ position: 1, key: 'k', allowed_mistakes: 1 }] }).pass[0]).toContain(
      'with at most 1 mistake at',
    );
  });

  it('a dialogue is checked on its last step only', () => {
    const steps = [
      { dialogueKey: 'a', bucketName: 'x' },
      { dialogueKey: 'a', bucketName: 'y' },
      { dialogueKey: 'b', bucketName: 'x' },
    ];
    expect(steps.map((_, i) => endsDialogue(steps, i))).toEqual([false, true, true]);
    expect(endsDialogue(steps, 5)).toBe(false);
    expect(lastStepOf(steps, 'a')).toBe(1);
    expect(lastStepOf(steps, 'zz')).toBe(-1);
  });

  it('needs a new check unless the same answers were corrected', () => {
    const answers = { a: { x: { '1': ['p'], '3': {} } } };
    expect(checkBody(answers, 'a')).toEqual({ x: { '1': ['p'] } });
    expect(checkBody(answers, 'missing')).toEqual({});
    const sent = stableJson(checkBody(answers, 'a'));
    expect(needsCheck(undefined, answers, 'a')).toBe(true);
    expect(needsCheck({ sent, result: ok('a') }, answers, 'a')).toBe(false);
    expect(needsCheck({ sent, result: WRONG }, answers, 'a')).toBe(true);
    expect(needsCheck({ sent, result: ok('a') }, { a: { x: { '1': ['q'] } } }, 'a')).toBe(true);
    expect(stableJson({ b: 1, a: [1, { d: 2, c: null }] })).toBe('{"a":[1,{"c":null,"d":2}],"b":1}');
  });

  it('announces what the server found, never what the page thinks', () => {
    expect(checkAnnouncement(WRONG, 1)).toBe(
      'Training dialogue 1: 1 turn needs correcting (Turn 2). Change your answers and check again.',
    );
    expect(checkAnnouncement(ok('a'), 2)).toBe('Training dialogue 2: all answers are correct.');
    expect(checkAnnouncement(ok('a', false), 2)).toBe('Training dialogue 2: all turns are corrected now.');
    expect(selectionText({ question: 'Q SPEAKER_X', answers: ['a', 'b'] }, (t) => t.replace('SPEAKER_X', 'Bot'))).toBe(
      'Q Bot: a, b',
    );
    expect(selectionText({ question: 'Does it fit?', answers: ['Yes'] })).toBe('Does it fit? Yes');
    expect(selectionText({ question: 'Labels:', answers: [] })).toBe('Labels:');
  });
});

describe('screening flow', () => {
  it('intro, check with feedback, correction, pass, then real work on the same link', async () => {
    const user = userEvent.setup();
    const calls = fakeServer(trainingRoutes({ passed: true, message: null }));
    render(<App search={LINK} />);

    const intro = await screen.findByRole('region', { name: 'Training' });
    expect(intro).toHaveTextContent('Before the real task, you label 2 training dialogues.');
    expect(intro).toHaveTextContent('To pass, label training dialogue 2 of 2 with at most 1 mistake at your first check.');
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(screen.getByText('Training dialogue 1 of 2')).toBeInTheDocument();

    // Leaving the dialogue checks it; the page stays and shows the server's feedback.
    await user.click(screen.getByRole('button', { name: 'Next' }));
    const check = calls.find((c) => c.url.endsWith('/dialogues/d_one/check'))!;
    expect(check.body).toEqual({ answers: { labels: { '1': [] } } });
    const feedback = await screen.findByRole('region', { name: '1 turn to correct' });
    const item = within(feedback).getByRole('listitem', { name: 'Turn 2' });
    expect(item).toHaveTextContent('Your answerNothing selected');
    expect(item).toHaveTextContent('Correct answerTick every label that fits: Greets Partner, Asks a question');
    expect(item).toHaveTextContent('Why: Bot greets and asks <img src=x onerror=alert(1)>');
    expect(document.querySelector('img')).toBeNull();
    expect(screen.getByText(/1 turn needs correcting \(Turn 2\)/)).toHaveAttribute('aria-live', 'polite');
    expect(screen.getByText('Training dialogue 1 of 2')).toBeInTheDocument();

    // Fix it and check again: the server says corrected, the page goes on.
    const turn = screen.getByRole('group', { name: 'Turn 2' });
    await user.click(within(turn).getByRole('checkbox', { name: 'Greets Partner' }));
    await user.click(within(turn).getByRole('checkbox', { name: 'Asks a question' }));
    await user.click(screen.getByRole('button', { name: 'Check again' }));
    expect(await screen.findByText('Training dialogue 2 of 2')).toBeInTheDocument();
    expect(screen.getByText('Training dialogue 1: all turns are corrected now.')).toBeInTheDocument();
    const checks = calls.filter((c) => c.url.endsWith('/dialogues/d_one/check'));
    expect(checks.at(-1)!.body).toEqual({ answers: { labels: { '1': ['greets', 'asks'] } } });

    // Going back and forth without changes does not check again.
    await user.click(screen.getByRole('button', { name: 'Back' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(calls.filter((c) => c.url.endsWith('/dialogues/d_one/check'))).toHaveLength(2);

    await user.click(screen.getByRole('button', { name: 'Submit' }));
    expect(await screen.findByRole('heading', { name: 'Training passed' })).toHaveFocus();
    const submitted = calls.find((c) => c.url.endsWith('/submit'))!.body as { answers: unknown };
    expect(submitted.answers).toEqual({
      d_one: { labels: { '1': ['greets', 'asks'] } },
      d_two: { labels: { '1': [], '3': [] } },
    });
    expect(calls.filter((c) => c.url.endsWith('/dialogues/d_two/check'))).toHaveLength(1);

    await user.click(screen.getByRole('button', { name: 'Continue to the task' }));
    expect(await screen.findByRole('heading', { name: 'Before you start' })).toBeInTheDocument();
    expect(screen.queryByRole('region', { name: 'Training' })).toBeNull();
    expect(calls.filter((c) => c.url === '/api/claim')).toHaveLength(2);
    expect(calls.at(-1)!.url).toBe('/api/units/u_real');
  });

  it('a failed training shows the polite not-eligible page with the server message', async () => {
    const user = userEvent.setup();
    const message = 'Thank you for your interest. You are not eligible for this task.';
    fakeServer(
      trainingRoutes(
        { passed: false, message },
        { 'POST /api/units/u_train/dialogues/d_one/check': () => [200, ok('d_one')] },
      ),
    );
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await user.click(await screen.findByRole('button', { name: 'Submit' }));
    expect(await screen.findByRole('heading', { name: 'Thank you for taking part' })).toHaveFocus();
    expect(screen.getByRole('alert')).toHaveTextContent(message);
    expect(screen.queryByRole('button')).toBeNull();
  });

  it('a check that fails to reach the server says so and does not move on', async () => {
    const user = userEvent.setup();
    fakeServer(
      trainingRoutes(
        { passed: true, message: null },
        { 'POST /api/units/u_train/dialogues/d_one/check': () => [409, { error: 'this unit is expired' }] },
      ),
    );
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('Your answers could not be checked: this unit is expired');
    expect(screen.getByText('Training dialogue 1 of 2')).toBeInTheDocument();
  });
});

describe('claims refused by the training', () => {
  it('403 not eligible shows the not-eligible page', async () => {
    const message = 'Thank you for your interest. Based on the training task, you are not eligible for this task.';
    fakeServer({ 'POST /api/claim': () => [403, { error: message }] });
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Thank you for taking part' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent(message);
  });

  it('503 shows "training is full, try later" with a retry', async () => {
    const user = userEvent.setup();
    let n = 0;
    const calls = fakeServer({
      'POST /api/claim': () => (++n === 1 ? [503, { error: 'The training task is full for now.' }] : [403, { error: 'not eligible' }]),
    });
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Training is full for now' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('The training task is full for now.');
    await user.click(screen.getByRole('button', { name: 'Try again' }));
    expect(await screen.findByRole('heading', { name: 'Thank you for taking part' })).toBeInTheDocument();
    expect(calls).toHaveLength(2);
  });
});
