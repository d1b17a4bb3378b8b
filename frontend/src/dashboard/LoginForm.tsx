import { useLayoutEffect, useRef, useState, type FormEvent } from 'react';
import { ApiError, type RequesterClient } from './api';
import { messageOf } from './context';
import type { Session } from './types';

interface Props {
  client: RequesterClient;
  /** Why the form is shown again (signed out, session ended). */
  notice: string | null;
  onSignedIn: (session: Session) => void;
}

/**
 * "Requester token" → `POST /api/requester/session`. The token is sent in the request body
 * only: the form has `method="post"`, so even without script it never lands in the address.
 */
export function LoginForm({ client, notice, onSignedIn }: Props) {
  const [token, setToken] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const input = useRef<HTMLInputElement>(null);

  useLayoutEffect(() => input.current?.focus(), []);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const value = token.trim();
    if (!value) {
      setError('Enter the requester token that the launcher printed.');
      input.current?.focus();
      return;
    }
    setBusy(true);
    setError(null);
    try {
      const session = await client.signIn(value);
      setToken('');
      onSignedIn(session);
    } catch (err) {
      setError(err instanceof ApiError && err.status === 401 ? `This token was not accepted: ${err.message}` : messageOf(err));
      setBusy(false);
      input.current?.select();
    }
  }

  return (
    <main className="page">
      <form className="message-card login" method="post" onSubmit={(e) => void submit(e)} noValidate>
        <h1>Requester dashboard</h1>
        {notice && (
          <p className="notice" role="status">
            {notice}
          </p>
        )}
        <p className="muted">
          Sign in with the requester token that the launcher printed at start. It is kept out of the address bar and
          of this browser&apos;s storage; the page holds a session cookie for 12 hours.
        </p>
        <div className="field">
          <label htmlFor="requester-token">Requester token</label>
          <input
            ref={input}
            id="requester-token"
            name="token"
            type="password"
            autoComplete="current-password"
            spellCheck={false}
            value={token}
            onChange={(e) => setToken(e.target.value)}
            aria-invalid={error ? true : undefined}
            aria-describedby={error ? 'login-error' : undefined}
          />
        </div>
        {error && (
          <p id="login-error" className="form-error" role="alert">
            {error}
          </p>
        )}
        <button type="submit" className="btn btn-primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
