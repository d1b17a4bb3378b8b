import { useCallback, useEffect, useRef, useState } from 'react';
import { LoadingPage, MessagePage } from '../components/MessagePage';
import { RequesterClient } from './api';
import { messageOf } from './context';
import { LoginForm } from './LoginForm';
import { Shell } from './Shell';
import type { Session } from './types';

type State =
  | { phase: 'loading' }
  | { phase: 'error'; message: string }
  | { phase: 'login'; notice: string | null }
  | { phase: 'ready'; session: Session };

/**
 * The requester dashboard: `GET /api/requester/session` decides between the login form and the
 * dashboard; any 401 later brings the login form back.
 */
export function DashboardApp({ client: given }: { client?: RequesterClient } = {}) {
  const [client] = useState(() => given ?? new RequesterClient());
  const [state, setState] = useState<State>({ phase: 'loading' });
  const started = useRef(false);

  const check = useCallback(async () => {
    setState({ phase: 'loading' });
    try {
      const session = await client.resume();
      setState(session ? { phase: 'ready', session } : { phase: 'login', notice: null });
    } catch (e) {
      setState({ phase: 'error', message: messageOf(e) });
    }
  }, [client]);

  useEffect(() => {
    client.onUnauthorized = (message) =>
      setState({ phase: 'login', notice: `You are signed out: ${message} Sign in again to continue.` });
    if (started.current) return;
    started.current = true;
    void check();
  }, [client, check]);

  useEffect(() => {
    document.title = state.phase === 'ready' ? `Dashboard: ${state.session.task}` : 'Requester dashboard';
  }, [state]);

  switch (state.phase) {
    case 'loading':
      return <LoadingPage text="Loading the dashboard…" />;
    case 'error':
      return (
        <MessagePage
          title="Cannot load the dashboard"
          role="alert"
          action={{ label: 'Try again', onClick: () => void check() }}
        >
          <p>{state.message}</p>
        </MessagePage>
      );
    case 'login':
      return (
        <LoginForm
          client={client}
          notice={state.notice}
          onSignedIn={(session) => setState({ phase: 'ready', session })}
        />
      );
    case 'ready':
      return (
        <Shell
          client={client}
          session={state.session}
          onSignedOut={() => setState({ phase: 'login', notice: 'You signed out.' })}
        />
      );
  }
}
