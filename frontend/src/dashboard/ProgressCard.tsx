import { label, runNumber } from './format';
import type { Overview } from './types';

/** Done of total with a bar, what is in progress and waiting, and the run's state. */
export function ProgressCard({ overview }: { overview: Overview }) {
  const { total, done, in_progress: inProgress, waiting } = overview.progress;
  const complete = overview.state === 'complete';
  const percent = total > 0 ? Math.round((done / total) * 100) : 0;
  return (
    <section className={complete ? 'stat stat-wide is-complete' : 'stat stat-wide'} aria-labelledby="progress-heading">
      <h3 className="stat-title" id="progress-heading">
        Progress
      </h3>
      <p className="stat-value" data-testid="progress">
        {done} of {total} units done
      </p>
      <div
        className="meter"
        role="progressbar"
        aria-labelledby="progress-heading"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
        aria-valuetext={`${done} of ${total} (${percent}%)`}
      >
        <span style={{ width: `${percent}%` }} />
      </div>
      <p className="stat-detail">
        {inProgress} in progress · {waiting} waiting
      </p>
      <p className={complete ? 'state-badge is-complete' : 'state-badge'}>
        {complete ? '✓ Complete: every unit is done' : `Run ${runNumber(overview.runs, overview.current_run) ?? '–'}: ${label(overview.state)}`}
      </p>
    </section>
  );
}
