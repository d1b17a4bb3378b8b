import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { RequesterClient } from '../src/dashboard/api';
import { Dashboard } from '../src/dashboard/context';
import { DashboardApp } from '../src/dashboard/DashboardApp';
import { REPORT_POLL_MS, ReportLink } from '../src/dashboard/ReportLink';
import { fakeServer } from './dashboardServer';

const QUESTIONS = [
  {
    bucket: 'issues',
    question: 'issues_labels',
    text: 'Select every label that applies to this reply:',
    n: 6,
    answers: { off_topic: 2, '(none)': 4 },
    labels: { off_topic: 'Off topic' },
    no_answer: 0,
    several: true,
  },
  {
    bucket: 'overall',
    question: 'Overall, how good was SPEAKER_X?',
    text: 'Overall, how good was Bot?',
    n: 5,
    answers: { '1': 1, '5': 2 },
    labels: { '1': '1: poor' },
    no_answer: 2,
    several: false,
  },
];

beforeEach(() => window.history.replaceState(null, '', '/dashboard#results'));
afterEach(() => {
  vi.unstubAllGlobals();
  vi.useRealTimers();
});

describe('results', () => {
  it('shows option labels, the questions as read and counts that add up with no answer', async () => {
    fakeServer({
      signedIn: true,
      handlers: [(req) => (req.url === '/api/requester/results' ? [200, { questions: QUESTIONS, downloads: [] }] : undefined)],
    });
    render(<DashboardApp />);
    const overall = await screen.findByRole('region', { name: /Overall, how good was Bot\?/ });
    const rows = within(overall).getAllByRole('row').slice(1).map((r) => r.textContent);
    expect(rows).toEqual(['1: poor1', '52', 'No answer2']);
    const issues = screen.getByRole('region', { name: /Select every label that applies/ });
    expect(within(issues).getAllByRole('row').slice(1).map((r) => r.textContent)).toEqual(['Off topic2', '(none)4']);
    expect(within(issues).getByText(/several options may be ticked/)).toBeInTheDocument();
    expect(screen.queryByText(/SPEAKER_X|off_topic/)).toBeNull();
  });
});

describe('analysis report', () => {
  it('shows how far the report got, then downloads it; a kept one at once', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const steps = [
      { state: 'running', step: 'reading the answers', done: 1, total: 11, error: null, current: true },
      { state: 'running', step: 'likert', done: 3, total: 11, error: null, current: true },
      { state: 'ready', step: 'writing the report', done: 11, total: 11, error: null, current: true },
      { state: 'ready', step: 'writing the report', done: 11, total: 11, error: null, current: true },
    ];
    const { requests } = fakeServer({
      signedIn: true,
      handlers: [(req) => (req.url === '/api/requester/report/status' ? [200, steps.shift()] : undefined)],
    });
    const client = new RequesterClient();
    const download = vi.fn();
    render(
      <Dashboard.Provider value={{ client, announce: () => undefined, loaded: () => undefined, provider: 'local' }}>
        <ReportLink url="/api/requester/report" label="Analysis report (HTML)" download={download} />
      </Dashboard.Provider>,
    );
    const user = userEvent.setup({ advanceTimers: vi.advanceTimersByTime });
    await user.click(screen.getByRole('link', { name: 'Analysis report (HTML)' }));
    expect(await screen.findByText('Computing the report: reading the answers (step 1 of 11)…')).toBeInTheDocument();
    await act(async () => {
      await vi.advanceTimersByTimeAsync(REPORT_POLL_MS);
    });
    expect(screen.getByText('Computing the report: likert (step 3 of 11)…')).toBeInTheDocument();
    expect(screen.getByRole('progressbar')).toHaveAttribute('value', '3');
    expect(download).not.toHaveBeenCalled();
    await act(async () => {
      await vi.advanceTimersByTimeAsync(REPORT_POLL_MS);
    });
    await waitFor(() => expect(download).toHaveBeenCalledWith('/api/requester/report'));
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(screen.getByText(/Ready: the report of the answers so far is downloading/)).toBeInTheDocument();

    await user.click(screen.getByRole('link', { name: 'Analysis report (HTML)' }));
    await waitFor(() => expect(download).toHaveBeenCalledTimes(2));
    expect(requests.filter((r) => r.url === '/api/requester/report/status')).toHaveLength(4);
  });
});
