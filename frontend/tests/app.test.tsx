import { render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { App } from '../src/App';
import type { SubmitTimings, Unit } from '../src/types';
import { makeSampleUnit } from '../dev/sampleUnit';

interface Call {
  method: string;
  url: string;
  body: unknown;
  auth: string | null;
}

/** A fake server: routes by method and path, records every call. */
function fakeServer(routes: Record<string, (body: unknown) => [number, unknown]>) {
  const calls: Call[] = [];
  const fetchMock = vi.fn(async (input: RequestInfo | URL, init?: RequestInit) => {
    const url = String(input);
    const method = init?.method ?? 'GET';
    const body = init?.body ? JSON.parse(String(init.body)) : undefined;
    const headers = (init?.headers ?? {}) as Record<string, string>;
    calls.push({ method, url, body, auth: headers.Authorization ?? null });
    const route = routes[`${method} ${url}`];
    const [status, payload] = route ? route(body) : [404, { error: 'not found' }];
    return new Response(JSON.stringify(payload), { status, headers: { 'Content-Type': 'application/json' } });
  });
  vi.stubGlobal('fetch', fetchMock);
  return calls;
}

/** A two-step unit: a multiselect (no require) and a comparative (require dialogue). */
function smallUnit(overrides: Partial<Unit> = {}): Unit {
  const base = makeSampleUnit();
  return {
    ...base,
    unit_id: 'u_1',
    seconds_remaining: null,
    dialogues: [
      { ...base.dialogues[0], annotation_tasks: ['labels'] },
      { ...base.dialogues[1], annotation_tasks: ['which_better'] },
    ],
    ...overrides,
  };
}

const LINK = '?worker_id=w1&assignment_id=a1&sig=s1';

function standardRoutes(unit: Unit, extra: Record<string, (body: unknown) => [number, unknown]> = {}) {
  return {
    'POST /api/claim': () => [200, { token: 'tok', unit_id: unit.unit_id, status: 'assigned' }] as [number, unknown],
    [`GET /api/units/${unit.unit_id}`]: () => [200, unit] as [number, unknown],
    [`PUT /api/units/${unit.unit_id}/draft`]: () => [200, { saved_at: '2026-01-01T00:00:00Z' }] as [number, unknown],
    [`POST /api/units/${unit.unit_id}/submit`]: () =>
      [200, { status: 'completed', completion_code: 'XYZ-123' }] as [number, unknown],
    ...extra,
  };
}

beforeEach(() => {
  vi.unstubAllGlobals();
});
afterEach(() => {
  vi.unstubAllGlobals();
});

describe('claim', () => {
  it('an incomplete link says so without calling the server', async () => {
    const calls = fakeServer({});
    render(<App search="?worker_id=w1" />);
    expect(await screen.findByRole('heading', { name: 'This link is incomplete' })).toBeInTheDocument();
    expect(calls).toHaveLength(0);
  });

  it('sends worker_id, assignment_id and sig; 403 shows its error message', async () => {
    const message = 'this link is not valid (its signature does not match); ask for a new link';
    const calls = fakeServer({ 'POST /api/claim': () => [403, { error: message }] });
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'This link is not valid' })).toBeInTheDocument();
    // From a capital, without saying the title again.
    expect(screen.getByText('Its signature does not match; ask for a new link')).toBeInTheDocument();
    expect(calls[0].body).toEqual({ worker_id: 'w1', assignment_id: 'a1', sig: 's1' });
  });

  it('409 shows why no work is available', async () => {
    fakeServer({ 'POST /api/claim': () => [409, { error: 'there is no more work in this task for you; thank you!' }] });
    render(<App search="?worker_id=w1&assignment_id=a1" />);
    expect(await screen.findByRole('heading', { name: 'No work available' })).toBeInTheDocument();
    expect(screen.getByText('There is no more work in this task for you; thank you!')).toBeInTheDocument();
  });

  it('status "completed" goes straight to the completion page', async () => {
    const unit = smallUnit({ status: 'completed', completion_code: 'DONE-42' });
    fakeServer(standardRoutes(unit, { 'POST /api/claim': () => [200, { token: 't', unit_id: 'u_1', status: 'completed' }] }));
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    expect(screen.getByText(/Your completion code:/)).toHaveTextContent('Your completion code: DONE-42');
  });

  it('offers the next unit when the server says the worker may take one', async () => {
    const unit = smallUnit({ status: 'completed', completion_code: null });
    const next = 'http://127.0.0.1:3000/?worker_id=w1&assignment_id=9f2c';
    const calls = fakeServer(
      standardRoutes(unit, {
        'POST /api/claim': () => [200, { token: 't', unit_id: 'u_1', status: 'completed' }],
        'GET /api/next': () => [200, { next_url: next, reason: null }],
      }),
    );
    render(<App search={LINK} />);
    const link = await screen.findByRole('link', { name: 'Take another unit' });
    expect(link).toHaveAttribute('href', next);
    expect(calls.find((c) => c.url === '/api/next')!.auth).toBe('Bearer t');
  });

  it('offers nothing when the worker may not take another unit', async () => {
    const unit = smallUnit({ status: 'completed', completion_code: null });
    const calls = fakeServer(
      standardRoutes(unit, {
        'POST /api/claim': () => [200, { token: 't', unit_id: 'u_1', status: 'completed' }],
        'GET /api/next': () => [200, { next_url: null, reason: 'there is no more work in this task for you' }],
      }),
    );
    render(<App search={LINK} />);
    await screen.findByRole('heading', { name: 'Thank you!' });
    await waitFor(() => expect(calls.some((c) => c.url === '/api/next')).toBe(true));
    expect(screen.queryByRole('link', { name: 'Take another unit' })).toBeNull();
    expect(screen.getByText('You can close this page now.')).toBeInTheDocument();
  });
});

describe('unit errors', () => {
  it('a unit whose time ran out (409 on GET) says it is no longer available', async () => {
    const unit = smallUnit();
    fakeServer(standardRoutes(unit, { 'GET /api/units/u_1': () => [409, { error: 'The time for this unit ran out.' }] }));
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'This task is no longer available' })).toBeInTheDocument();
    expect(screen.getByText('The time for this unit ran out.')).toBeInTheDocument();
  });

  it('a refused draft (409) is shown, not silently retried', async () => {
    const user = userEvent.setup();
    const unit = smallUnit();
    const calls = fakeServer(
      standardRoutes(unit, { 'PUT /api/units/u_1/draft': () => [409, { error: 'this unit is expired; drafts are closed' }] }),
    );
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    expect(await screen.findByText('Your answers could not be saved: this unit is expired; drafts are closed')).toBeInTheDocument();
    expect(screen.getByText('Not saved')).toBeInTheDocument();
    expect(calls.filter((c) => c.method === 'PUT')).toHaveLength(1);
  });
});

describe('annotation flow', () => {
  it('overview → steps with gating → submit → completion code', async () => {
    const user = userEvent.setup();
    const unit = smallUnit();
    const calls = fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);

    expect(await screen.findByRole('heading', { name: 'Before you start' })).toBeInTheDocument();
    expect(screen.getByText(/short conversations between a person and a chatbot/)).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Back' })).toBeDisabled();
    expect(calls.find((c) => c.method === 'GET')!.auth).toBe('Bearer tok');

    await user.click(screen.getByRole('button', { name: 'Next' }));
    expect(screen.getByText('Step 1 of 2')).toBeInTheDocument();
    await user.click(within(screen.getByRole('group', { name: 'Turn 2' })).getByRole('checkbox', { name: 'Asks a question' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));

    expect(screen.getByText('Step 2 of 2')).toBeInTheDocument();
    const submit = screen.getByRole('button', { name: 'Submit' });
    expect(submit).toBeDisabled();
    expect(screen.getByText("Answer 'In which conversation was Bot more helpful?'")).toBeInTheDocument();
    await user.click(screen.getByRole('radio', { name: 'No difference' }));
    expect(submit).toBeEnabled();
    await user.click(submit);

    expect(await screen.findByRole('heading', { name: 'Thank you!' })).toBeInTheDocument();
    expect(screen.getByText(/Your completion code:/)).toHaveTextContent('Your completion code: XYZ-123');
    const posted = calls.find((c) => c.url === '/api/units/u_1/submit')!;
    expect(posted.auth).toBe('Bearer tok');
    const body = posted.body as { answers: unknown; client_id: string; timings: object };
    expect(body.answers).toEqual({
      d_one: { labels: { '0': [], '1': ['asks'], '2': [], '3': [] } },
      d_two: { which_better: { dialogue: 'No difference' } },
    });
    expect(body.client_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    const { steps } = body.timings as SubmitTimings;
    expect(steps.map((s) => [s.dialogue, s.bucket])).toEqual([
      ['d_one', 'labels'],
      ['d_two', 'which_better'],
    ]);
    for (const step of steps) {
      expect(step.intervals).toHaveLength(1);
      const [[start, end]] = step.intervals;
      expect(Number.isInteger(start) && end >= start).toBe(true);
    }
    expect(steps[1].intervals[0][0]).toBeGreaterThanOrEqual(steps[0].intervals[0][1]);
  });

  it('a kind of unit this page does not know gets a polite reload message', async () => {
    fakeServer(standardRoutes(smallUnit({ kind: 'video' })));
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Please reload this page' })).toBeInTheDocument();
    expect(screen.getByRole('alert')).toHaveTextContent('This kind of task (video) is not supported by this version of the page');
    expect(screen.getByRole('button', { name: 'Reload' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Next' })).toBeNull();
  });

  it('a unit without a kind (older server) is an annotation unit', async () => {
    fakeServer(standardRoutes(smallUnit({ kind: undefined })));
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'Before you start' })).toBeInTheDocument();
  });

  it('Next stays disabled with a hint naming the turn and question', async () => {
    const user = userEvent.setup();
    const base = makeSampleUnit();
    const unit = smallUnit({ dialogues: [{ ...base.dialogues[0], annotation_tasks: ['relevance', 'labels'] }] });
    fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    expect(screen.getByRole('button', { name: 'Next' })).toBeDisabled();
    expect(screen.getByText("Turn 2: answer 'Is Bot's response relevant to what Partner said?'")).toBeInTheDocument();
    expect(screen.getByRole('button', { name: 'Next' })).toHaveAccessibleDescription(/Turn 2: answer/);
  });

  it('a 422 on submit shows the problems', async () => {
    const user = userEvent.setup();
    const unit = smallUnit({ dialogues: [{ ...makeSampleUnit().dialogues[0], annotation_tasks: ['labels'] }] });
    fakeServer(
      standardRoutes(unit, {
        'POST /api/units/u_1/submit': () => [
          422,
          {
            error: 'Some answers are missing.',
            problems: [{ dialogue: 'd_one', bucket: 'labels', turn: 3, question: null, message: 'value missing' }],
          },
        ],
      }),
    );
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    await user.click(screen.getByRole('button', { name: 'Submit' }));
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent('Some answers are missing.');
    expect(alert).toHaveTextContent('Step 1, Turn 4: value missing');
  });
});

describe('drafts and time', () => {
  it('restores answers and the step from the draft', async () => {
    const unit = smallUnit({
      draft: {
        answers: { d_one: { labels: { '1': ['greets'] } }, d_two: { which_better: { dialogue: 'The left one' } } },
        position: { step: 2 },
        saved_at: '2026-01-01T00:00:00Z',
      },
    });
    fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);
    expect(await screen.findByText('Step 2 of 2')).toBeInTheDocument();
    expect(screen.getByRole('radio', { name: 'The left one' })).toBeChecked();
    expect(screen.getByRole('button', { name: 'Submit' })).toBeEnabled();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Back' }));
    expect(within(screen.getByRole('group', { name: 'Turn 2' })).getByRole('checkbox', { name: 'Greets Partner' })).toBeChecked();
  });

  it('step timings restored from the draft are kept and submitted with the new visit', async () => {
    const user = userEvent.setup();
    const unit = smallUnit({
      draft: {
        answers: { d_one: { labels: { '1': ['greets'] } }, d_two: { which_better: { dialogue: 'The left one' } } },
        position: {
          step: 2,
          timings: [
            { dialogue: 'd_two', bucket: 'which_better', intervals: [[1000, 4000], [9, 1], 'x'] },
            { dialogue: 'd_gone', bucket: 'labels', intervals: [[1, 2]] },
          ],
        },
      },
    });
    const calls = fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Submit' }));
    await screen.findByRole('heading', { name: 'Thank you!' });
    const body = calls.find((c) => c.url === '/api/units/u_1/submit')!.body as { timings: SubmitTimings };
    const [only] = body.timings.steps;
    expect(body.timings.steps).toHaveLength(1);
    expect(only.dialogue).toBe('d_two');
    expect(only.intervals[0]).toEqual([1000, 4000]);
    expect(only.intervals).toHaveLength(2);
  });

  it('never restores past the first incomplete step', async () => {
    const base = makeSampleUnit();
    const unit = smallUnit({
      dialogues: [{ ...base.dialogues[0], annotation_tasks: ['relevance', 'labels'] }],
      draft: { answers: {}, position: { step: 2 } },
    });
    fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);
    expect(await screen.findByText('Step 1 of 2')).toBeInTheDocument();
  });

  it('saves drafts with answers and position, at once on step change', async () => {
    const user = userEvent.setup();
    const unit = smallUnit();
    const calls = fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    await waitFor(() => expect(calls.some((c) => c.method === 'PUT')).toBe(true));
    const first = calls.find((c) => c.method === 'PUT')!;
    expect(first.url).toBe('/api/units/u_1/draft');
    expect(first.auth).toBe('Bearer tok');
    const interval = [expect.any(Number), expect.any(Number)];
    const timed = { step: 1, timings: [{ dialogue: 'd_one', bucket: 'labels', intervals: [interval] }] };
    expect((first.body as { position: unknown }).position).toEqual(timed);
    await user.click(within(screen.getByRole('group', { name: 'Turn 4' })).getByRole('checkbox', { name: 'Greets Partner' }));
    await waitFor(
      () => {
        const last = calls.filter((c) => c.method === 'PUT').at(-1)!;
        expect(last.body).toEqual({
          answers: { d_one: { labels: { '0': [], '1': [], '2': [], '3': ['greets'] } } },
          position: timed,
        });
      },
      { timeout: 3000 },
    );
    expect(await screen.findByText('Saved')).toBeInTheDocument();
  });

  it('shows the remaining time and when it is over', async () => {
    const unit = smallUnit({ seconds_remaining: 1 });
    fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);
    expect(await screen.findByRole('timer')).toHaveTextContent('Time left 0:01');
    await waitFor(() => expect(screen.getByRole('timer')).toHaveTextContent('Time is over'), { timeout: 3000 });
  });

  it('time over: the form turns read-only, and "Take a new unit" claims the link again', async () => {
    const user = userEvent.setup();
    const unit = smallUnit({ seconds_remaining: 1 });
    const next = smallUnit({ unit_id: 'u_2' });
    let claims = 0;
    const calls = fakeServer({
      ...standardRoutes(unit),
      ...standardRoutes(next),
      'POST /api/claim': () => [200, { token: 'tok', unit_id: ++claims === 1 ? 'u_1' : 'u_2', status: 'assigned' }],
    });
    render(<App search={LINK} />);
    await user.click(await screen.findByRole('button', { name: 'Next' }));
    const alert = await screen.findByRole('alert', {}, { timeout: 3000 });
    expect(alert).toHaveTextContent('The time for this unit is over. Your answers can no longer be changed or submitted');
    for (const box of screen.getAllByRole('checkbox')) expect(box).toBeDisabled();
    expect(screen.getByRole('button', { name: 'Back' })).toBeDisabled();
    const drafts = calls.filter((c) => c.method === 'PUT').length;
    await user.click(within(alert).getByRole('button', { name: 'Take a new unit' }));
    // The worker asked for it: the new unit opens at once, without the "ran out" notice.
    expect(await screen.findByRole('heading', { name: 'Before you start' })).toBeInTheDocument();
    expect(screen.queryByRole('timer')).toBeNull();
    expect(calls.filter((c) => c.url === '/api/claim')).toHaveLength(2);
    expect(calls.filter((c) => c.method === 'PUT' && c.url.includes('u_1'))).toHaveLength(drafts);
  });

  it('a reload that gets another unit (the first one ran out of time) says so before showing it', async () => {
    const user = userEvent.setup();
    fakeServer(standardRoutes(smallUnit()));
    const first = render(<App search={LINK} />);
    await screen.findByRole('heading', { name: 'Before you start' });
    first.unmount();
    fakeServer(standardRoutes(smallUnit({ unit_id: 'u_2' })));
    render(<App search={LINK} />);
    expect(await screen.findByRole('heading', { name: 'The time for your previous unit ran out' })).toHaveFocus();
    expect(screen.queryByRole('heading', { name: 'Before you start' })).toBeNull();
    await user.click(screen.getByRole('button', { name: 'Start the new unit' }));
    expect(await screen.findByRole('heading', { name: 'Before you start' })).toBeInTheDocument();
  });

  it('the same unit given afresh after its time ran out says so too (its answers are gone)', async () => {
    fakeServer(standardRoutes(smallUnit({ seconds_remaining: 600 })));
    const first = render(<App search={LINK} />);
    await screen.findByRole('heading', { name: 'Before you start' });
    first.unmount();
    vi.spyOn(Date, 'now').mockReturnValue(Date.now() + 601_000);
    try {
      render(<App search={LINK} />);
      expect(await screen.findByRole('heading', { name: 'The time for your previous unit ran out' })).toBeInTheDocument();
    } finally {
      vi.restoreAllMocks();
    }
  });

  it('no timer when seconds_remaining is null', async () => {
    fakeServer(standardRoutes(smallUnit()));
    render(<App search={LINK} />);
    await screen.findByRole('heading', { name: 'Before you start' });
    expect(screen.queryByRole('timer')).toBeNull();
  });
});

describe('instructions', () => {
  it('the Instructions button opens the bucket instructions in a dialog; Escape closes it', async () => {
    const user = userEvent.setup();
    const unit = smallUnit();
    fakeServer(standardRoutes(unit));
    render(<App search={LINK} />);
    expect(await screen.findByText('Compare the two conversations.')).toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Next' }));
    await user.click(screen.getByRole('button', { name: 'Next' }));
    const button = screen.getByRole('button', { name: 'Instructions' });
    await user.click(button);
    const dialog = screen.getByRole('dialog', { name: 'Instructions: Which better' });
    expect(dialog).toHaveTextContent('Compare the two conversations.');
    expect(button).toHaveAttribute('aria-controls', dialog.id);
    await user.keyboard('{Escape}');
    expect(screen.queryByRole('dialog')).toBeNull();
    expect(button).toHaveFocus();
  });
});
