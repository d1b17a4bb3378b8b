import { DECISION_LABELS, label, SYNC_LABELS } from './format';
import type { Decision } from './types';

/** "Rejected · sent to the platform" (or "Not decided"). */
export function DecisionBadge({ decision }: { decision: Decision | null }) {
  if (!decision) return <span className="muted">Not decided</span>;
  const sync = SYNC_LABELS[decision.sync_state] ?? label(decision.sync_state);
  return (
    <span className={`decision decision-${decision.decision}`}>
      <strong>{DECISION_LABELS[decision.decision] ?? label(decision.decision)}</strong>
      <span className={decision.sync_state === 'failed' ? 'cell-note error-text' : 'cell-note'}>{sync}</span>
    </span>
  );
}
