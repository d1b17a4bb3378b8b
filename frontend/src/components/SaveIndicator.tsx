import type { SaveStatus } from '../useDraftSaver';

/** How the latest draft save went, in the top bar. */
export function SaveIndicator({ status, error, retrying }: { status: SaveStatus; error: string | null; retrying: boolean }) {
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
