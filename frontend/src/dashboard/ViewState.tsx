import type { ReactNode } from 'react';

interface Props<T> {
  data: T | null;
  error: string | null;
  children: (data: T) => ReactNode;
}

/** First load: "Loading…"; a failed poll keeps the last data and says so above it. */
export function ViewState<T>({ data, error, children }: Props<T>) {
  return (
    <>
      {error && (
        <p className="banner is-error view-error" role="alert">
          {data ? `Could not update: ${error} (showing the last data)` : error}
        </p>
      )}
      {data === null && !error && (
        <p className="muted" aria-busy="true">
          Loading…
        </p>
      )}
      {data !== null && children(data)}
    </>
  );
}
