import { useState, type FormEvent } from 'react';
import { ActionMessage, type Outcome } from './ActionMessage';
import { messageOf, useDashboard } from './context';
import type { WorkerRow } from './types';

interface Props {
  worker: WorkerRow;
  onChanged: () => void;
}

/** Block / Unblock a worker, and grant or revoke a qualification (name + value). */
export function WorkerActions({ worker, onChanged }: Props) {
  const { client, announce } = useDashboard();
  const [reason, setReason] = useState('');
  const [name, setName] = useState('');
  const [value, setValue] = useState('1');
  const [busy, setBusy] = useState(false);
  const [blockOutcome, setBlockOutcome] = useState<Outcome | null>(null);
  const [qualOutcome, setQualOutcome] = useState<Outcome | null>(null);
  const blocked = worker.flags.includes('blocked');
  const id = worker.pseudonym;

  async function act(call: () => Promise<{ message?: string }>, done: string, set: (o: Outcome) => void) {
    setBusy(true);
    try {
      const answer = await call();
      const text = typeof answer?.message === 'string' && answer.message ? answer.message : done;
      set({ ok: true, text });
      announce(text);
      onChanged();
    } catch (e) {
      set({ ok: false, text: messageOf(e) });
    } finally {
      setBusy(false);
    }
  }

  function qualification(e: FormEvent, grant: boolean) {
    e.preventDefault();
    const q = name.trim();
    if (!q) {
      setQualOutcome({ ok: false, text: 'Enter the name of the qualification.' });
      return;
    }
    const n = Number(value);
    if (grant && (!Number.isInteger(n) || value.trim() === '')) {
      setQualOutcome({ ok: false, text: 'The value must be a whole number.' });
      return;
    }
    void act(
      () => (grant ? client.grant(id, q, n) : client.revoke(id, q)),
      grant ? `Granted ${q} = ${n} to ${id}.` : `Revoked ${q} from ${id}.`,
      setQualOutcome,
    );
  }

  return (
    <div className="worker-actions">
      <form
        className="mini-form"
        aria-label={blocked ? `Unblock ${id}` : `Block ${id}`}
        onSubmit={(e) => {
          e.preventDefault();
          if (blocked) void act(() => client.unblock(id), `${id} is unblocked.`, setBlockOutcome);
          else void act(() => client.block(id, reason.trim()), `${id} is blocked: new work is refused.`, setBlockOutcome);
        }}
      >
        <h3 className="mini-title">{blocked ? 'Blocked' : 'Block'}</h3>
        {!blocked && (
          <div className="field">
            <label htmlFor={`block-reason-${id}`}>Reason (optional, sent to platforms that keep one)</label>
            <input id={`block-reason-${id}`} type="text" value={reason} onChange={(e) => setReason(e.target.value)} />
          </div>
        )}
        <button type="submit" className={blocked ? 'btn btn-small' : 'btn btn-small btn-danger'} disabled={busy}>
          {blocked ? 'Unblock' : 'Block'}
        </button>
        <ActionMessage outcome={blockOutcome} />
      </form>
      <form className="mini-form" aria-label={`Qualification of ${id}`} onSubmit={(e) => qualification(e, true)}>
        <h3 className="mini-title">Qualification</h3>
        <div className="field-row">
          <div className="field">
            <label htmlFor={`qual-name-${id}`}>Name</label>
            <input
              id={`qual-name-${id}`}
              type="text"
              list={`qual-names-${id}`}
              value={name}
              onChange={(e) => setName(e.target.value)}
            />
            <datalist id={`qual-names-${id}`}>
              {worker.qualifications.map((q) => (
                <option key={q.name} value={q.name} />
              ))}
            </datalist>
          </div>
          <div className="field field-narrow">
            <label htmlFor={`qual-value-${id}`}>Value</label>
            <input
              id={`qual-value-${id}`}
              type="number"
              step={1}
              inputMode="numeric"
              value={value}
              onChange={(e) => setValue(e.target.value)}
            />
          </div>
        </div>
        <div className="button-row">
          <button type="submit" className="btn btn-small" disabled={busy}>
            Grant
          </button>
          <button type="button" className="btn btn-small" disabled={busy} onClick={(e) => qualification(e, false)}>
            Revoke
          </button>
        </div>
        <ActionMessage outcome={qualOutcome} />
      </form>
    </div>
  );
}
