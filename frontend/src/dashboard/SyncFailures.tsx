import { useState } from 'react';
import { ActionMessage, type Outcome } from './ActionMessage';
import { messageOf, useDashboard } from './context';
import { DECISION_LABELS, label, SYNC_LABELS } from './format';
import { ScrollTable } from './ScrollTable';
import type { SyncFailures as Failures } from './types';

interface Props {
  failures: Failures;
  /** Reload the overview after an action. */
  onChanged: () => void;
}

/**
 * Decisions and bonuses that did not reach the platform: **Retry now** sends them again;
 * an `uncertain` bonus (the platform may have paid it) is settled by the requester.
 */
export function SyncFailures({ failures, onChanged }: Props) {
  const { client, announce } = useDashboard();
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  async function act(what: () => Promise<unknown>, done: string) {
    setBusy(true);
    setOutcome(null);
    try {
      await what();
      setOutcome({ ok: true, text: done });
      announce(done);
    } catch (e) {
      setOutcome({ ok: false, text: messageOf(e) });
    } finally {
      setBusy(false);
      onChanged();
    }
  }

  const count = failures.reviews.length + failures.bonuses.length;
  return (
    <section className="panel" aria-labelledby="sync-heading">
      <div className="panel-head">
        <h2 id="sync-heading">Payments not sent to the platform</h2>
        <button
          type="button"
          className="btn btn-small"
          disabled={busy || count === 0}
          onClick={() => void act(() => client.retrySync(), 'Sent again; see the rows still listed.')}
        >
          Retry now
        </button>
      </div>
      <ActionMessage outcome={outcome} />
      {count === 0 && <p className="muted">Nothing is waiting.</p>}
      {failures.reviews.length > 0 && (
        <ScrollTable
          label="Decisions not sent"
          caption="Decisions not sent"
          head={
            <>
              <th scope="col">Unit</th>
              <th scope="col">Decision</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
            </>
          }
        >
          {failures.reviews.map((r) => (
            <tr key={r.unit_id}>
              <td className="mono">{r.unit_id}</td>
              <td>{DECISION_LABELS[r.decision] ?? label(r.decision)}</td>
              <td>{r.attempts}</td>
              <td className="wrap">{r.last_error ?? '–'}</td>
            </tr>
          ))}
        </ScrollTable>
      )}
      {failures.bonuses.length > 0 && (
        <ScrollTable
          label="Bonuses not paid"
          caption="Bonuses not paid"
          head={
            <>
              <th scope="col">Unit</th>
              <th scope="col">Worker</th>
              <th scope="col">Amount</th>
              <th scope="col">State</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last error</th>
              <th scope="col">Settle</th>
            </>
          }
        >
          {failures.bonuses.map((b) => (
            <tr key={b.id}>
              <td className="mono">{b.unit_id}</td>
              <td className="mono">{b.worker ?? '–'}</td>
              <td>{b.amount.toFixed(2)}</td>
              <td>{SYNC_LABELS[b.state] ?? label(b.state)}</td>
              <td>{b.attempts}</td>
              <td className="wrap">{b.last_error ?? '–'}</td>
              <td>
                {b.state === 'uncertain' ? (
                  <span className="button-row">
                    <button
                      type="button"
                      className="btn btn-small"
                      disabled={busy}
                      aria-label={`Bonus ${b.id} was paid`}
                      onClick={() =>
                        void act(() => client.resolveBonus(b.id, true), `Bonus ${b.id} marked as paid.`)
                      }
                    >
                      Was paid
                    </button>
                    <button
                      type="button"
                      className="btn btn-small"
                      disabled={busy}
                      aria-label={`Bonus ${b.id} was not paid: send it again`}
                      onClick={() =>
                        void act(
                          () => client.resolveBonus(b.id, false),
                          `Bonus ${b.id} marked as not paid; it will be sent again.`,
                        )
                      }
                    >
                      Not paid
                    </button>
                  </span>
                ) : (
                  '–'
                )}
              </td>
            </tr>
          ))}
        </ScrollTable>
      )}
    </section>
  );
}
