import { useRef, useState } from 'react';
import { ActionMessage, type Outcome } from './ActionMessage';
import { messageOf, useDashboard } from './context';
import { DECISION_LABELS, PROLIFIC_REJECTION_CATEGORIES } from './format';
import type { DecisionName } from './types';

interface Props {
  unitId: string;
  onDecided: () => void;
}

/**
 * Approve, Reject or Soft-reject one submission. A reject needs a reason (the worker reads it)
 * and, on Prolific, one of Prolific's rejection categories.
 */
export function DecisionForm({ unitId, onDecided }: Props) {
  const { client, announce, provider } = useDashboard();
  const [reason, setReason] = useState('');
  const [category, setCategory] = useState('');
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);
  const [invalid, setInvalid] = useState<'reason' | 'category' | null>(null);
  const reasonRef = useRef<HTMLTextAreaElement>(null);
  const categoryRef = useRef<HTMLSelectElement>(null);
  const prolific = provider === 'prolific';

  async function decide(decision: DecisionName) {
    setOutcome(null);
    setInvalid(null);
    if (decision === 'reject' && !reason.trim()) {
      setInvalid('reason');
      setOutcome({ ok: false, text: 'Give a reason for the rejection: the worker reads it.' });
      reasonRef.current?.focus();
      return;
    }
    if (decision === 'reject' && prolific && !category) {
      setInvalid('category');
      setOutcome({ ok: false, text: 'Choose a rejection category: Prolific requires one.' });
      categoryRef.current?.focus();
      return;
    }
    setBusy(true);
    try {
      const answer = await client.decide(unitId, decision, reason.trim(), decision === 'reject' && prolific ? category : null);
      const text = `${unitId}: ${DECISION_LABELS[answer.decision] ?? decision}.`;
      announce(text);
      setOutcome({ ok: true, text });
      onDecided();
    } catch (e) {
      setOutcome({ ok: false, text: messageOf(e) });
    } finally {
      setBusy(false);
    }
  }

  return (
    <form className="decision-form" aria-label="Decide" onSubmit={(e) => e.preventDefault()}>
      <div className="field">
        <label htmlFor="decision-reason">Reason (required to reject)</label>
        <textarea
          id="decision-reason"
          ref={reasonRef}
          rows={2}
          value={reason}
          onChange={(e) => setReason(e.target.value)}
          aria-invalid={invalid === 'reason' ? true : undefined}
          aria-describedby={invalid === 'reason' ? 'decision-message' : undefined}
        />
      </div>
      {prolific && (
        <div className="field">
          <label htmlFor="decision-category">Rejection category (Prolific)</label>
          <select
            id="decision-category"
            ref={categoryRef}
            value={category}
            onChange={(e) => setCategory(e.target.value)}
            aria-invalid={invalid === 'category' ? true : undefined}
            aria-describedby={invalid === 'category' ? 'decision-message' : undefined}
          >
            <option value="">Choose…</option>
            {PROLIFIC_REJECTION_CATEGORIES.map(([value, text]) => (
              <option key={value} value={value}>
                {text}
              </option>
            ))}
          </select>
        </div>
      )}
      <div className="button-row">
        <button type="button" className="btn btn-primary btn-small" disabled={busy} onClick={() => void decide('approve')}>
          Approve
        </button>
        <button type="button" className="btn btn-danger btn-small" disabled={busy} onClick={() => void decide('reject')}>
          Reject
        </button>
        <button type="button" className="btn btn-small" disabled={busy} onClick={() => void decide('soft_reject')}>
          Soft-reject
        </button>
      </div>
      <ActionMessage outcome={outcome} id="decision-message" />
    </form>
  );
}
