import { useEffect, useRef, useState } from 'react';
import { useDashboard } from './context';
import type { ReportStatus } from './types';

export const REPORT_POLL_MS = 1000;

/**
 * The analysis report's download: the server computes it once per data version, which takes
 * seconds to a minute, so a click asks for it, shows how far it got and downloads it once it
 * is ready (at once when it was kept).
 */
export function ReportLink({
  url,
  label,
  download = (href: string) => window.location.assign(href),
}: {
  url: string;
  label: string;
  download?: (href: string) => void;
}) {
  const { client } = useDashboard();
  const [status, setStatus] = useState<ReportStatus | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [asked, setAsked] = useState(false);
  const timer = useRef<number | undefined>(undefined);

  useEffect(() => () => window.clearTimeout(timer.current), []);

  const poll = async () => {
    try {
      const now = await client.reportStatus();
      setStatus(now);
      setError(null);
      if (now.state === 'running' || !now.current) {
        timer.current = window.setTimeout(poll, REPORT_POLL_MS);
      } else if (now.state === 'ready') {
        setAsked(false);
        download(url);
      } else {
        setAsked(false);
      }
    } catch (e) {
      setAsked(false);
      setError(e instanceof Error ? e.message : String(e));
    }
  };

  const start = (event: React.MouseEvent) => {
    event.preventDefault();
    if (asked) return;
    setAsked(true);
    setStatus(null);
    void poll();
  };

  const running = asked && (status === null || status.state === 'running' || !status.current);
  return (
    <>
      <a href={url} onClick={start} aria-busy={running}>
        {label}
      </a>
      {running && (
        <span className="report-progress" role="status">
          {' '}
          <progress max={status?.total || 1} value={status?.done ?? 0} />{' '}
          {status
            ? `Computing the report: ${status.step} (step ${status.done} of ${status.total})…`
            : 'Asking for the report…'}
        </span>
      )}
      {!asked && status?.state === 'ready' && (
        <span className="muted small" role="status">
          {' '}
          Ready: the report of the answers so far is downloading.
        </span>
      )}
      {!asked && (status?.state === 'failed' || error) && (
        <span className="error-text small" role="alert">
          {' '}
          The report could not be made: {status?.error ?? error}
        </span>
      )}
    </>
  );
}
