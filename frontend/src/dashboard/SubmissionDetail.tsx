import { useCallback, useLayoutEffect, useRef } from 'react';
import { BonusForm } from './BonusForm';
import { useDashboard } from './context';
import { DecisionBadge } from './DecisionBadge';
import { DecisionForm } from './DecisionForm';
import { formatDuration, formatTime, label, SYNC_LABELS } from './format';
import { JudgeAnswers } from './JudgeAnswers';
import { SubmissionView } from './SubmissionView';
import { usePoll } from './usePoll';
import { ViewState } from './ViewState';

interface Props {
  unitId: string;
  onClose: () => void;
}

/** One submission: what the worker saw and answered, its decision and bonuses, and the actions. */
export function SubmissionDetail({ unitId, onClose }: Props) {
  const { client, loaded } = useDashboard();
  const load = useCallback(() => client.unit(unitId), [client, unitId]);
  const { data, error, refresh } = usePoll(load, unitId, loaded);
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => heading.current?.focus(), [unitId]);

  return (
    <>
      <div className="detail-head">
        <button type="button" className="btn btn-small" onClick={onClose}>
          ← Back to the list
        </button>
        <h2 className="view-title" tabIndex={-1} ref={heading}>
          Submission <span className="mono">{unitId}</span>
        </h2>
      </div>
      <ViewState data={data} error={error}>
        {(unit) => (
          <>
            <dl className="facts">
              <div>
                <dt>Worker</dt>
                <dd className="mono">{unit.worker ?? '–'}</dd>
              </div>
              <div>
                <dt>Kind / pool</dt>
                <dd>
                  {label(unit.kind)} · {unit.pool}
                </dd>
              </div>
              <div>
                <dt>Status</dt>
                <dd>{label(unit.status)}</dd>
              </div>
              <div>
                <dt>Submitted</dt>
                <dd>{formatTime(unit.submitted_at)}</dd>
              </div>
              <div>
                <dt>Time taken</dt>
                <dd>{formatDuration(unit.duration_s)}</dd>
              </div>
              <div>
                <dt>Checks</dt>
                <dd>
                  {unit.flagged ? 'Flagged' : 'Not flagged'}
                  {unit.verified === false ? ' · identity not verified' : unit.verified ? ' · verified' : ''}
                </dd>
              </div>
            </dl>

            <section className="panel" aria-labelledby="decision-heading">
              <h3 id="decision-heading">Decision</h3>
              {unit.decision ? (
                <div className="decision-shown">
                  <p>
                    <DecisionBadge decision={unit.decision} />
                  </p>
                  {unit.decision.reason && <p>Reason: {unit.decision.reason}</p>}
                  {unit.decision.rejection_category && <p>Category: {unit.decision.rejection_category}</p>}
                  {unit.decision.decided_at && <p className="muted small">Decided {formatTime(unit.decision.decided_at)}</p>}
                  {unit.decision.last_error && (
                    <p className="form-error">
                      Last error: {unit.decision.last_error} (it is sent again in the background; see Overview)
                    </p>
                  )}
                </div>
              ) : (
                <DecisionForm unitId={unit.unit_id} onDecided={() => void refresh()} />
              )}
            </section>

            <section className="panel" aria-labelledby="bonus-heading">
              <h3 id="bonus-heading">Bonuses</h3>
              {unit.bonuses.length > 0 && (
                <ul className="bonus-list">
                  {unit.bonuses.map((b) => (
                    <li key={b.id}>
                      <strong>{b.amount.toFixed(2)}</strong> – {b.reason}{' '}
                      <span className={b.state === 'failed' || b.state === 'uncertain' ? 'error-text' : 'muted'}>
                        ({SYNC_LABELS[b.state] ?? label(b.state)}
                        {b.last_error ? `: ${b.last_error}` : ''})
                      </span>
                    </li>
                  ))}
                </ul>
              )}
              <BonusForm unitId={unit.unit_id} onPaid={() => void refresh()} />
            </section>

            <section aria-labelledby="seen-heading">
              <h3 id="seen-heading" className="section-title">
                What the worker saw and answered
              </h3>
              <SubmissionView unit={unit} />
            </section>
            <JudgeAnswers unit={unit} />
          </>
        )}
      </ViewState>
    </>
  );
}
