import { act, render, renderHook, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { DashboardApp } from '../src/dashboard/DashboardApp';
import { SubmissionView } from '../src/dashboard/SubmissionView';
import { EMPTY_FILTERS, reviewQuery } from '../src/dashboard/reviewQuery';
import { usePoll } from '../src/dashboard/usePoll';
import { CSRF, fakeServer, UNIT, type Recorded } from './dashboardServer';

function setHidden(hidden: boolean) {
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => hidden });
  document.dispatchEvent(new Event('visibilitychange'));
}

beforeEach(() => {
  window.history.replaceState(null, '', '/dashboard');
  localStorage.clear();
  sessionStorage.clear();
});

afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => false });
});

async function signIn(user = userEvent.setup()) {
  await user.type(await screen.findByLabelText('Requester token'), 'good-token');
  await user.click(screen.getByRole('button', { name: 'Sign in' }));
  await screen.findByRole('heading', { name: 'Overview', level: 2 });
  return user;
}

const nonGet = (requests: Recorded[]) => requests.filter((r) => r.method !== 'GET');

describe('login', () => {
  it('shows the form when there is no session, signs in with the token in the body only', async () => {
    const { requests } = fakeServer();
    render(<DashboardApp />);
    const input = await screen.findByLabelText('Requester token');
    expect(input).toHaveAttribute('type', 'password');
    expect(input.closest('form')).toHaveAttribute('method', 'post');
    const user = userEvent.setup();
    await user.type(input, 'bad-token');
    await user.click(screen.getByRole('button', { name: 'Sign in' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('This token was not accepted: wrong token');
    await user.clear(input);
    await signIn(user);
    expect(screen.getByRole('heading', { name: 'demo', level: 1 })).toBeInTheDocument();
    expect(await screen.findByText('2 of 8 units done')).toBeInTheDocument();
    const posts = requests.filter((r) => r.method === 'POST' && r.url === '/api/requester/session');
    expect(posts.map((r) => r.body)).toEqual([{ token: 'bad-token' }, { token: 'good-token' }]);
    expect(requests.every((r) => !r.url.includes('token'))).toBe(true);
    expect(window.location.href).not.toContain('good-token');
    expect(JSON.stringify({ ...localStorage })).not.toContain('good-token');
    expect(JSON.stringify({ ...sessionStorage })).not.toContain(CSRF);
  });

  it('goes straight to the dashboard with a valid session cookie, and signs out with the CSRF header', async () => {
    const { requests } = fakeServer({ signedIn: true });
    render(<DashboardApp />);
    await screen.findByRole('heading', { name: 'Overview', level: 2 });
    await userEvent.setup().click(screen.getByRole('button', { name: 'Sign out' }));
    expect(await screen.findByLabelText('Requester token')).toBeInTheDocument();
    const del = requests.find((r) => r.method === 'DELETE');
    expect(del?.headers['x-csrf-token']).toBe(CSRF);
  });

  it('shows the login form again on a 401 at any time', async () => {
    const server = fakeServer({ signedIn: true });
    render(<DashboardApp />);
    await screen.findByText('2 of 8 units done');
    server.state.signedIn = false; // the session ends on the server
    await userEvent.setup().click(screen.getByRole('tab', { name: 'Workers' }));
    expect(await screen.findByLabelText('Requester token')).toBeInTheDocument();
    expect(screen.getByRole('status')).toHaveTextContent('You are signed out: the session ended');
  });
});

describe('actions', () => {
  it('sends the CSRF token on every POST and refreshes after an action', async () => {
    const { requests } = fakeServer({ signedIn: true });
    window.history.replaceState(null, '', '/dashboard#review');
    render(<DashboardApp />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Open u_1' }));
    expect(await screen.findByRole('heading', { name: /Submission u_1/ })).toHaveFocus();
    const loadsBefore = requests.filter((r) => r.url === '/api/requester/units/u_1').length;
    await user.click(screen.getByRole('button', { name: 'Approve' }));
    await within(screen.getByRole('form', { name: 'Decide' })).findByText('u_1: Approved.');
    const posts = nonGet(requests);
    expect(posts).toHaveLength(1);
    expect(posts[0]).toMatchObject({ url: '/api/requester/units/u_1/review', body: { decision: 'approve', reason: '' } });
    expect(posts[0].headers['x-csrf-token']).toBe(CSRF);
    await waitFor(() => expect(requests.filter((r) => r.url === '/api/requester/units/u_1').length).toBe(loadsBefore + 1));
  });

  it('refuses a reject without a reason, then sends it with the reason', async () => {
    const { requests } = fakeServer({ signedIn: true });
    window.history.replaceState(null, '', '/dashboard#review');
    render(<DashboardApp />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Open u_1' }));
    await screen.findByText('Hi there!');
    expect(screen.queryByLabelText('Rejection category (Prolific)')).not.toBeInTheDocument();
    await user.click(screen.getByRole('button', { name: 'Reject' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Give a reason for the rejection');
    const reason = screen.getByLabelText('Reason (required to reject)');
    expect(reason).toHaveFocus();
    expect(reason).toHaveAttribute('aria-invalid', 'true');
    expect(nonGet(requests)).toHaveLength(0);
    await user.type(reason, 'Answered at random.');
    await user.click(screen.getByRole('button', { name: 'Reject' }));
    await within(screen.getByRole('form', { name: 'Decide' })).findByText('u_1: Rejected.');
    expect(nonGet(requests)[0].body).toEqual({ decision: 'reject', reason: 'Answered at random.' });
  });

  it("asks for Prolific's rejection category on Prolific", async () => {
    const { requests } = fakeServer({ signedIn: true, provider: 'prolific' });
    window.history.replaceState(null, '', '/dashboard#review');
    render(<DashboardApp />);
    const user = userEvent.setup();
    await user.click(await screen.findByRole('button', { name: 'Open u_1' }));
    const category = await screen.findByLabelText('Rejection category (Prolific)');
    expect(within(category).getAllByRole('option').map((o) => (o as HTMLOptionElement).value)).toEqual([
      '', 'TOO_QUICKLY', 'TOO_SLOWLY', 'FAILED_INSTRUCTIONS', 'INCOMP_LONGITUDINAL', 'FAILED_CHECK', 'LOW_EFFORT',
      'MALINGERING', 'NO_CODE', 'BAD_CODE', 'NO_DATA', 'UNSUPP_DEVICE', 'OTHER',
    ]);
    await user.type(screen.getByLabelText('Reason (required to reject)'), 'Too fast');
    await user.click(screen.getByRole('button', { name: 'Reject' }));
    expect(screen.getByRole('alert')).toHaveTextContent('Choose a rejection category');
    await user.selectOptions(category, 'TOO_QUICKLY');
    await user.click(screen.getByRole('button', { name: 'Reject' }));
    await within(screen.getByRole('form', { name: 'Decide' })).findByText('u_1: Rejected.');
    expect(nonGet(requests)[0].body).toEqual({ decision: 'reject', reason: 'Too fast', rejection_category: 'TOO_QUICKLY' });
  });

  it('shows the submission read-only, worker text as text', async () => {
    fakeServer({ signedIn: true });
    window.history.replaceState(null, '', '/dashboard#review');
    const { container } = render(<DashboardApp />);
    await userEvent.setup().click(await screen.findByRole('button', { name: 'Open u_1' }));
    expect(await screen.findByText('Hello <img src=x onerror=alert(1)>')).toBeInTheDocument();
    expect(container.querySelector('img')).toBeNull();
    const turn = screen.getByRole('group', { name: 'Answers for turn 2' });
    expect(turn).toHaveTextContent('Labels');
    expect(turn).toHaveTextContent('greets');
    expect(screen.getByText('Answers about the whole dialogue').parentElement).toHaveTextContent('How good?: 4');
    expect(container.querySelectorAll('input[type=radio]')).toHaveLength(0);
    await userEvent.setup().click(screen.getByRole('button', { name: '← Back to the list' }));
    await waitFor(() => expect(screen.getByRole('button', { name: 'Open u_1' })).toHaveFocus());
  });
});

describe('a chat under review', () => {
  it("shows the answers about each chat under the chat's bot, the labels under their replies", () => {
    const chat = (position: number, bot: string) => ({
      conversation_id: position + 1, bot, status: 'completed', position,
      messages: [
        { index: 0, role: 'worker', text: 'Hi', labels: null },
        { index: 1, role: 'bot', text: `I am ${bot}`, labels: { turn_quality: 'good' } },
      ],
    });
    const unit = {
      ...UNIT,
      kind: 'chat',
      payload: { ...UNIT.payload, dialogues: [], buckets: {} },
      conversations: [chat(0, 'alpha'), chat(1, 'beta')],
      answers: {
        dialogues: [{ key: 'c0' }],
        answers: {
          c0: { turn_quality: { '1': 'good' }, overall: { dialogue: { 'How good?': 4 } } },
          c1: { overall: { dialogue: { 'How good?': 2 } } },
          c0_c1: { which: { dialogue: { 'Which is better?': 'left' } } },
        },
      },
    };
    render(<SubmissionView unit={unit} />);
    expect(screen.getByRole('region', { name: 'Answers about chat 1 with alpha' })).toHaveTextContent('How good?: 4');
    expect(screen.getByRole('region', { name: 'Answers about chat 1 with alpha' })).not.toHaveTextContent('Turn quality');
    expect(screen.getByRole('region', { name: 'Answers about chat 2 with beta' })).toHaveTextContent('How good?: 2');
    expect(screen.getByRole('region', { name: 'Answers about chat 1 with alpha and chat 2 with beta' })).toHaveTextContent('left');
    expect(screen.queryByText(/Answers for (answers|dialogues)/)).not.toBeInTheDocument();
  });
});

describe('review filters', () => {
  it('builds the query from the filters that are set', () => {
    expect(reviewQuery(EMPTY_FILTERS)).toBe('offset=0&limit=50');
    expect(
      reviewQuery({ worker: ' w_1 ', status: 'completed', decision: 'none', bucket: 'overall', flag: 'flagged', pool: 'gold' }, 100),
    ).toBe('worker=w_1&status=completed&decision=none&bucket=overall&flag=flagged&pool=gold&offset=100&limit=50');
  });

  it('reloads the list with the chosen filters', async () => {
    const { requests } = fakeServer({ signedIn: true });
    window.history.replaceState(null, '', '/dashboard#review');
    render(<DashboardApp />);
    const user = userEvent.setup();
    await screen.findByRole('button', { name: 'Open u_1' });
    await user.selectOptions(screen.getByLabelText('Decision'), 'none');
    await user.selectOptions(await screen.findByLabelText('Bucket'), 'labels');
    await user.type(screen.getByLabelText('Worker'), 'w_aa{Enter}');
    await waitFor(() =>
      expect(requests.map((r) => r.url)).toContain('/api/requester/review?worker=w_aa&decision=none&bucket=labels&offset=0&limit=50'),
    );
  });
});

describe('results', () => {
  it('renders counts per answer and the downloads', async () => {
    fakeServer({ signedIn: true });
    window.history.replaceState(null, '', '/dashboard#results');
    render(<DashboardApp />);
    const section = await screen.findByRole('region', { name: /How good was it\?/ });
    expect(within(section).getByText('6 answers')).toBeInTheDocument();
    const rows = within(section).getAllByRole('row').slice(1).map((r) => r.textContent);
    expect(rows).toEqual(['11', '43', '52']); // answer, count
    expect(screen.getByRole('link', { name: 'Items (CSV)' })).toHaveAttribute('href', '/api/requester/submissions?format=csv');
    expect(screen.getByTestId('updated')).toHaveTextContent(/^Updated \d\d:\d\d:\d\d$/);
  });
});

describe('polling', () => {
  it('loads every 5 s, pauses while the tab is hidden and loads at once when it is back', async () => {
    vi.useFakeTimers();
    const load = vi.fn(async () => 1);
    renderHook(() => usePoll(load, 'k'));
    await act(async () => {});
    expect(load).toHaveBeenCalledTimes(1);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(5000);
    });
    expect(load).toHaveBeenCalledTimes(2);
    act(() => setHidden(true));
    await act(async () => {
      await vi.advanceTimersByTimeAsync(30_000);
    });
    expect(load).toHaveBeenCalledTimes(2);
    await act(async () => setHidden(false));
    expect(load).toHaveBeenCalledTimes(3);
    await act(async () => {
      await vi.advanceTimersByTimeAsync(5000);
    });
    expect(load).toHaveBeenCalledTimes(4);
  });
});

describe('judges', () => {
  const judges: [number, unknown] = [
    200,
    {
      judges: [
        {
          judge: 'gpt',
          units_answered: 3,
          units_open: 1,
          calls: 9,
          invalid_replies: 2,
          failed_calls: 1,
          input_tokens: 1200,
          output_tokens: 90,
          cost: 0.0123,
          settings: { type: 'openai', model: 'judge-model-1' },
          prompt_sha256: 'abc',
          last_call_at: '2026-01-01T10:00:00Z',
        },
      ],
    },
  ];
  const answers: [number, unknown] = [
    200,
    {
      unit_id: 'u_1',
      judges: [
        {
          judge: 'gpt',
          unit_id: 'u_j1',
          status: 'completed',
          answers: { d1: { labels: { '1': ['<b>rude</b>'] }, overall: { dialogue: { 'How good?': 2 } } } },
          submitted_at: '2026-01-01T10:00:00Z',
          summary: { settings: { model: 'judge-model-1' } },
          failures: [],
        },
        {
          judge: 'small',
          unit_id: 'u_j2',
          status: 'assigned',
          answers: null,
          submitted_at: null,
          summary: null,
          failures: [{ dialogue_key: 'd1', bucket: 'overall', outcome: 'invalid', reason: 'missing keys "dialogue"', at: '2026-01-01T10:00:00Z' }],
        },
      ],
    },
  ];

  it('shows the judges apart from the people: a panel in Review and their answers under a submission', async () => {
    const { requests } = fakeServer({
      signedIn: true,
      handlers: [
        (req) => (req.url === '/api/requester/judges' ? judges : undefined),
        (req) => (req.url === '/api/requester/units/u_1/judges' ? answers : undefined),
      ],
    });
    window.history.replaceState(null, '', '/dashboard#review');
    const { container } = render(<DashboardApp />);
    const panel = await screen.findByRole('region', { name: 'LLM judges' });
    expect(panel).toHaveTextContent('judge-model-1');
    expect(within(panel).getByRole('row', { name: /gpt/ })).toHaveTextContent('0.0123');
    // the people's list is the people's: the judge is not a row of it
    expect(screen.queryByRole('button', { name: 'Open u_j1' })).toBeNull();
    await userEvent.setup().click(screen.getByRole('button', { name: 'Open u_1' }));
    const gpt = await screen.findByRole('region', { name: 'Judge gpt' });
    expect(gpt).toHaveTextContent('Dialogue 1');
    expect(gpt).toHaveTextContent('<b>rude</b>');
    expect(gpt).toHaveTextContent('How good?: 2');
    expect(container.querySelector('.judge-answers b')).toBeNull();
    const small = screen.getByRole('region', { name: 'Judge small' });
    expect(small).toHaveTextContent('Not answered yet: these questions failed');
    expect(small).toHaveTextContent('missing keys "dialogue"');
    expect(requests.some((r) => r.url === '/api/requester/units/u_1/judges')).toBe(true);
  });
});
