import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import { ApiError, claim, getNext, getUnit, NetworkError } from './api';
import { ArenaUnit } from './arena/ArenaUnit';
import { isChatState } from './chat';
import { Annotator } from './components/Annotator';
import { ChatUnit } from './components/ChatUnit';
import { LoadingPage, MessagePage } from './components/MessagePage';
import { NotEligiblePage, ScreeningPassedPage, TrainingFullPage } from './components/Screening';
import type { ScreeningOutcome, Unit } from './types';
import { isWebLink } from './platform';
import { forgetOpenUnit, openUnit } from './shownUnit';

type State =
  | { phase: 'loading' }
  | { phase: 'error'; title: string; message: string; retry: boolean }
  | { phase: 'ready'; unit: Unit; token: string }
  | { phase: 'replaced'; unit: Unit; token: string }
  | { phase: 'unsupported'; kind: string }
  | { phase: 'completed'; code: string | null; token?: string }
  | { phase: 'screening-passed'; message: string | null }
  | { phase: 'not-eligible'; message: string | null }
  | { phase: 'training-full'; message: string };

export interface LinkParams {
  workerId: string | null;
  assignmentId: string | null;
  sig: string | null;
}

export function readLinkParams(search: string): LinkParams {
  const q = new URLSearchParams(search);
  return {
    workerId: q.get('worker_id'),
    assignmentId: q.get('assignment_id'),
    sig: q.get('sig'),
  };
}

/** Kinds of unit this page version can show (the server says which one in `kind`). */
const SUPPORTED_KINDS = new Set(['annotation', 'screening', 'chat', 'arena']);

/** Servers older than `kind` only served annotation units. */
function unitKind(unit: Unit): string {
  return typeof unit.kind === 'string' ? unit.kind : 'annotation';
}

/**
 * A server message under a card's title: from a capital, without repeating the title ("No work
 * available" over "there is no more work…"; "This link is not valid" over "this link is not
 * valid (its signature does not match); ask…" → "Its signature does not match; ask…").
 */
export function cardMessage(title: string, message: string): string {
  let text = message.trim();
  if (text.toLowerCase().startsWith(title.toLowerCase())) {
    text = text.slice(title.length).replace(/^[\s:;,.-]+/, '');
    const close = text.indexOf(')');
    if (text.startsWith('(') && close > 0) text = text.slice(1, close) + text.slice(close + 1);
  }
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** "Take a new unit" waits this long, this many times, for the server to give up the old one. */
const GIVE_UP_WAIT_MS = 1000;
const GIVE_UP_TRIES = 10;

/** Unit states after a submission (the completion page is shown for these). */
const DONE_STATUSES = new Set(['completed', 'accepted', 'rejected', 'soft_rejected']);

/**
 * A claim refused because the worker may not work on this task (failed training, blocked):
 * the server answers 403 with a "not eligible" message; other 403s are bad links.
 */
function isNotEligible(e: ApiError): boolean {
  return e.status === 403 && /not eligible/i.test(e.message);
}

function errorState(e: unknown, during: 'claim' | 'unit'): State {
  if (e instanceof ApiError) {
    if (during === 'claim' && isNotEligible(e)) return { phase: 'not-eligible', message: e.message };
    if (during === 'claim' && e.status === 503) return { phase: 'training-full', message: e.message };
    if (e.status === 403) return { phase: 'error', title: 'This link is not valid', message: e.message, retry: false };
    if (e.status === 409) {
      const title = during === 'claim' ? 'No work available' : 'This task is no longer available';
      return { phase: 'error', title, message: e.message, retry: false };
    }
    if (e.status === 401) return { phase: 'error', title: 'Session expired', message: e.message, retry: true };
    if (e.status === 404) return { phase: 'error', title: 'Not found', message: e.message, retry: false };
    return { phase: 'error', title: 'Something went wrong', message: e.message, retry: e.status >= 500 };
  }
  if (e instanceof NetworkError) return { phase: 'error', title: 'Cannot reach the server', message: e.message, retry: true };
  return { phase: 'error', title: 'Something went wrong', message: e instanceof Error ? e.message : String(e), retry: true };
}

export function App({ search = window.location.search }: { search?: string }) {
  const [state, setState] = useState<State>({ phase: 'loading' });
  const started = useRef(false);

  /**
   * Claims the link and loads its unit. `givenUp`: the unit whose time ran out, given up with
   * "Take a new unit"; while the server has not returned it to the pool yet (it does so about
   * once a second) the claim still resumes it, so the page asks again a moment later.
   */
  const load = useCallback(async (givenUp: string | null = null, tries = 0): Promise<void> => {
    const { workerId, assignmentId, sig } = readLinkParams(search);
    if (!workerId || !assignmentId) {
      setState({
        phase: 'error',
        title: 'This link is incomplete',
        message: 'The address must contain worker_id and assignment_id. Please open the exact link you were given.',
        retry: false,
      });
      return;
    }
    setState({ phase: 'loading' });
    let during: 'claim' | 'unit' = 'claim';
    try {
      const claimed = await claim(workerId, assignmentId, sig);
      during = 'unit';
      if (DONE_STATUSES.has(claimed.status)) {
        let code: string | null = null;
        try {
          code = (await getUnit(claimed.unit_id, claimed.token)).completion_code ?? null;
        } catch {
          code = null;
        }
        setState({ phase: 'completed', code, token: claimed.token });
        return;
      }
      const unit = await getUnit(claimed.unit_id, claimed.token);
      if (unit.unit_id === givenUp && unit.seconds_remaining === 0 && tries < GIVE_UP_TRIES) {
        await new Promise((resolve) => window.setTimeout(resolve, GIVE_UP_WAIT_MS));
        return load(givenUp, tries + 1);
      }
      if (DONE_STATUSES.has(unit.status)) {
        setState({ phase: 'completed', code: unit.completion_code ?? null, token: claimed.token });
        return;
      }
      if (unit.status !== 'assigned') {
        setState({
          phase: 'error',
          title: 'This task is no longer available',
          message: `This unit is ${unit.status}. Please open your task link again to get new work.`,
          retry: false,
        });
        return;
      }
      const kind = unitKind(unit);
      if (!SUPPORTED_KINDS.has(kind)) {
        setState({ phase: 'unsupported', kind });
        return;
      }
      if ((kind === 'chat' || kind === 'arena') && !isChatState(unit.chat)) {
        setState({
          phase: 'error',
          title: 'Something went wrong',
          message: 'The server sent a chat task without its chat. Please try again later.',
          retry: true,
        });
        return;
      }
      // The link's earlier unit ran out of time and this one is given afresh: say so first.
      // (A unit still open with no time left is the same one, about to go back to the pool.)
      const replaced = openUnit(workerId, assignmentId, unit.unit_id, unit.seconds_remaining) && unit.seconds_remaining !== 0;
      setState({ phase: replaced ? 'replaced' : 'ready', unit, token: claimed.token });
    } catch (e) {
      setState(errorState(e, during));
    }
  }, [search]);

  useEffect(() => {
    if (started.current) return;
    started.current = true;
    void load();
  }, [load]);

  useEffect(() => {
    if (state.phase === 'ready' && state.unit.task?.title) document.title = state.unit.task.title;
  }, [state]);

  const { workerId, assignmentId } = readLinkParams(search);
  /** The open unit is done with (submitted, or given up when its time ran out). */
  const forgetUnit = () => {
    if (workerId && assignmentId) forgetOpenUnit(workerId, assignmentId);
  };
  /** A unit submitted: the completion, or a screening unit's outcome (a screening battle
   * passed with more to go says so in its message). */
  const completed = (code: string | null, screening?: ScreeningOutcome) => {
    forgetUnit();
    if (!screening) setState({ phase: 'completed', code, token: state.phase === 'ready' ? state.token : undefined });
    else if (screening.passed) setState({ phase: 'screening-passed', message: screening.message });
    else setState({ phase: 'not-eligible', message: screening.message });
  };
  /** "Take a new unit" after the time ran out: the same link claims again. */
  const takeNewUnit = (expired: string) => {
    forgetUnit();
    void load(expired);
  };

  switch (state.phase) {
    case 'loading':
      return <LoadingPage text="Loading your task…" />;
    case 'error':
      return (
        <MessagePage
          title={state.title}
          role="alert"
          action={state.retry ? { label: 'Try again', onClick: () => void load() } : undefined}
        >
          <p>{cardMessage(state.title, state.message)}</p>
        </MessagePage>
      );
    case 'completed':
      return <CompletionPage code={state.code} token={state.token} />;
    case 'screening-passed':
      return <ScreeningPassedPage message={state.message} onContinue={() => void load()} />;
    case 'not-eligible':
      return <NotEligiblePage message={state.message} />;
    case 'training-full':
      return <TrainingFullPage message={state.message} onRetry={() => void load()} />;
    case 'replaced':
      return (
        <MessagePage
          title="The time for your previous unit ran out"
          role="status"
          focusHeading
          action={{ label: 'Start the new unit', onClick: () => setState({ ...state, phase: 'ready' }) }}
        >
          <p>
            That unit went back to the pool, and the answers you gave on it were not kept. This link now has a new unit
            for you.
          </p>
        </MessagePage>
      );
    case 'unsupported':
      return (
        <MessagePage
          title="Please reload this page"
          role="alert"
          action={{ label: 'Reload', onClick: () => window.location.reload() }}
        >
          <p>
            This kind of task ({state.kind}) is not supported by this version of the page. Reloading usually fetches
            the newer version. If this message stays after a reload, please contact the
            requester.
          </p>
        </MessagePage>
      );
    case 'ready':
      if ((unitKind(state.unit) === 'chat' || unitKind(state.unit) === 'arena') && state.unit.chat) {
        const Live = unitKind(state.unit) === 'arena' ? ArenaUnit : ChatUnit;
        return (
          <Live
            key={state.unit.unit_id}
            unit={state.unit}
            chat={state.unit.chat}
            token={state.token}
            onCompleted={completed}
            onRefused={(e) => setState(errorState(e, 'unit'))}
          />
        );
      }
      return (
        <Annotator
          key={state.unit.unit_id}
          unit={state.unit}
          token={state.token}
          onTakeNew={() => takeNewUnit(state.unit.unit_id)}
          onCompleted={completed}
        />
      );
  }
}

export function CompletionPage({ code, token }: { code: string | null; token?: string }) {
  const [copied, setCopied] = useState(false);
  const [nextUrl, setNextUrl] = useState<string | null>(null);
  const headingRef = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => headingRef.current?.focus(), []);
  useEffect(() => {
    if (!token) return;
    let live = true;
    // Offered only when the server says this worker may take another unit now.
    getNext(token).then(
      (next) => live && setNextUrl(isWebLink(next.next_url) ? next.next_url : null),
      () => undefined,
    );
    return () => {
      live = false;
    };
  }, [token]);
  const canCopy = typeof navigator !== 'undefined' && !!navigator.clipboard && window.isSecureContext;
  return (
    <main className="page">
      <div className="message-card is-success">
        <h1 tabIndex={-1} ref={headingRef}>
          Thank you!
        </h1>
        <p>Your answers have been submitted.</p>
        {code !== null && code !== undefined && (
          <p className="completion-code">
            Your completion code: <strong className="code">{code}</strong>
            {canCopy && (
              <button
                type="button"
                className="btn btn-small"
                onClick={() =>
                  void navigator.clipboard.writeText(code).then(
                    () => setCopied(true),
                    () => setCopied(false),
                  )
                }
              >
                {copied ? 'Copied' : 'Copy code'}
              </button>
            )}
          </p>
        )}
        {nextUrl ? (
          <p>
            <a className="btn btn-primary" href={nextUrl}>
              Take another unit
            </a>
          </p>
        ) : null}
        <p className="muted">{nextUrl ? 'Or close this page.' : 'You can close this page now.'}</p>
      </div>
    </main>
  );
}
