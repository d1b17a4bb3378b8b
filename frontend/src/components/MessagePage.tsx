import { useLayoutEffect, useRef, type ReactNode } from 'react';

interface Props {
  title: ReactNode;
  /** `alert` for refusals and errors, `status` for good news. */
  role: 'alert' | 'status';
  success?: boolean;
  /** Move focus to the heading when the page appears. */
  focusHeading?: boolean;
  /** A button under the card. */
  action?: { label: string; onClick: () => void };
  children: ReactNode;
}

/** A full page with one message card (and at most one button): errors, refusals, outcomes. */
export function MessagePage({ title, role, success = false, focusHeading = false, action, children }: Props) {
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => {
    if (focusHeading) heading.current?.focus();
  }, [focusHeading]);
  return (
    <main className="page">
      <div className={success ? 'message-card is-success' : 'message-card'} role={role}>
        {focusHeading ? (
          <h1 tabIndex={-1} ref={heading}>
            {title}
          </h1>
        ) : (
          <h1>{title}</h1>
        )}
        {children}
      </div>
      {action && (
        <button type="button" className="btn btn-primary" onClick={action.onClick}>
          {action.label}
        </button>
      )}
    </main>
  );
}

/** The whole page while its first data loads. */
export function LoadingPage({ text }: { text: string }) {
  return (
    <main className="page center" aria-busy="true">
      <p className="muted" role="status">
        {text}
      </p>
    </main>
  );
}
