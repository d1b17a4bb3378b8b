import { useState, type FormEvent } from 'react';
import { ActionMessage, type Outcome } from './ActionMessage';
import { messageOf, useDashboard } from './context';

interface Props {
  unitId: string;
  onPaid: () => void;
}

/** Pay a bonus for one submission: amount (in the platform's currency) and a reason. */
export function BonusForm({ unitId, onPaid }: Props) {
  const { client, announce } = useDashboard();
  const [amount, setAmount] = useState('');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  async function submit(e: FormEvent) {
    e.preventDefault();
    const value = Number(amount);
    if (!amount.trim() || !Number.isFinite(value) || value <= 0) {
      setOutcome({ ok: false, text: 'Enter an amount above 0, e.g. 0.50.' });
      return;
    }
    if (!reason.trim()) {
      setOutcome({ ok: false, text: 'Give a reason for the bonus: the worker reads it.' });
      return;
    }
    setBusy(true);
    setOutcome(null);
    try {
      await client.bonus(unitId, value, reason.trim());
      const text = `Bonus of ${value.toFixed(2)} recorded for ${unitId}.`;
      setOutcome({ ok: true, text });
      announce(text);
      setAmount('');
      setReason('');
      onPaid();
    } catch (err) {
      setOutcome({ ok: false, text: messageOf(err) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="mini-form" aria-label="Pay a bonus" onSubmit={(e) => void submit(e)} noValidate>
      <div className="field-row">
        <div className="field field-narrow">
          <label htmlFor="bonus-amount">Amount</label>
          <input
            id="bonus-amount"
            type="number"
            min={0.01}
            step={0.01}
            inputMode="decimal"
            value={amount}
            onChange={(e) => setAmount(e.target.value)}
          />
        </div>
        <div className="field">
          <label htmlFor="bonus-reason">Reason</label>
          <input id="bonus-reason" type="text" value={reason} onChange={(e) => setReason(e.target.value)} />
        </div>
      </div>
      <button type="submit" className="btn btn-small" disabled={busy}>
        Pay bonus
      </button>
      <ActionMessage outcome={outcome} />
    </form>
  );
}
