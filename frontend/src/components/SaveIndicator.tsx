import type { SaveStatus } from '../useDraftSaver';

interface Props {
  status: SaveStatus;
  error: string | null;
  retrying: boolean;
}

/** How the latest draft save went, in the top bar. */
export function SaveIndicator({ status, error, retrying }: Props) {
  if (status === 'idle') return null;
  if (status === 'error') {
    return (
      <span className="save-status is-error" role="status" title={error ?? undefined}>
        {retrying ? 'Not saved — retrying' : 'Not saved'}
      </span>
    );
  }
  return <span className="save-status">{status === 'saving' ? 'Saving…' : 'Saved'}</span>;
}

/** A draft the server refused (4xx): not retried until the next change. */
export function SaveProblem({ status, error, retrying }: Props) {
  if (status !== 'error' || retrying || !error) return null;
  return (
    <div className="banner is-error" role="alert">
      Your answers could not be saved: {error}
    </div>
  );
}
