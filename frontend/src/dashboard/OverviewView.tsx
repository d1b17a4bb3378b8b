import { useCallback } from 'react';
import { useDashboard } from './context';
import { formatDuration, formatRate, formatTime, label, UNIT_STATUS_LABELS } from './format';
import { ProgressCard } from './ProgressCard';
import { ScrollTable } from './ScrollTable';
import { StatCard } from './StatCard';
import { SyncFailures } from './SyncFailures';
import { ThroughputChart } from './ThroughputChart';
import type { Overview, PassRate, SyncFailures as Failures } from './types';
import { usePoll } from './usePoll';
import { ViewState } from './ViewState';

interface Loaded {
  overview: Overview;
  failures: Failures | null;
}

function passDetail(rate: PassRate) {
  if (rate.passed + rate.failed === 0) return 'Nothing scored yet';
  return `${rate.passed} passed, ${rate.failed} failed`;
}

/** Progress, runs, throughput, times, pass rates, live chats, quotas and unsent payments. */
export function OverviewView() {
  const { client, loaded } = useDashboard();
  const load = useCallback(async (): Promise<Loaded> => {
    const overview = await client.overview();
    const pending = overview.sync_failures.reviews + overview.sync_failures.bonuses;
    const failures = pending > 0 ? await client.syncFailures() : null;
    return { overview, failures };
  }, [client]);
  const { data, error, refresh } = usePoll(load, 'overview', loaded);

  return (
    <>
      <h2 className="view-title">Overview</h2>
      <ViewState data={data} error={error}>
        {({ overview: o, failures }) => (
          <>
            <div className="stats">
              <ProgressCard overview={o} />
              <StatCard
                title="Time per unit"
                value={`${formatDuration(o.time_per_unit.median_s)}`}
              >
                median; 90th percentile {formatDuration(o.time_per_unit.p90_s)} ({o.time_per_unit.count} {o.time_per_unit.count === 1 ? 'unit' : 'units'})
              </StatCard>
              {o.screening.used !== false && (
                <StatCard title="Screening pass rate" value={formatRate(o.screening.pass_rate)}>
                  {passDetail(o.screening)}
                </StatCard>
              )}
              {o.gold.used !== false && (
                <StatCard title="Gold pass rate" value={formatRate(o.gold.pass_rate)}>
                  {passDetail(o.gold)}
                </StatCard>
              )}
              <StatCard title="Live chats" value={o.live_chats}>
                conversations going on now
              </StatCard>
            </div>

            <section className="panel" aria-labelledby="throughput-heading">
              <h2 id="throughput-heading">Submissions over time</h2>
              <ThroughputChart bucketSeconds={o.throughput.bucket_seconds} points={o.throughput.points} />
            </section>

            <section className="panel" aria-labelledby="runs-heading">
              <h2 id="runs-heading">Units by status per run</h2>
              <RunsTable overview={o} />
            </section>

            {o.quotas.length > 0 && (
              <section className="panel" aria-labelledby="quotas-heading">
                <h2 id="quotas-heading">Conversations per bot</h2>
                <ScrollTable
                  labelledBy="quotas-heading"
                  head={
                    <>
                      <th scope="col">Bot</th>
                      <th scope="col">Done</th>
                      <th scope="col">In progress</th>
                      <th scope="col">Needed</th>
                    </>
                  }
                >
                  {o.quotas.map((q) => (
                    <tr key={q.bot}>
                      <th scope="row">{q.bot}</th>
                      <td>{q.done}</td>
                      <td>{q.in_progress}</td>
                      <td>{q.needed}</td>
                    </tr>
                  ))}
                </ScrollTable>
              </section>
            )}

            {(failures || o.sync_failures.reviews + o.sync_failures.bonuses > 0) && (
              <SyncFailures failures={failures ?? { reviews: [], bonuses: [] }} onChanged={() => void refresh()} />
            )}
          </>
        )}
      </ViewState>
    </>
  );
}

function RunsTable({ overview }: { overview: Overview }) {
  const statuses = Array.from(new Set(overview.runs.flatMap((r) => Object.keys(r.units))));
  if (overview.runs.length === 0) return <p className="muted">No run yet.</p>;
  return (
    <ScrollTable
      labelledBy="runs-heading"
      head={
        <>
          <th scope="col">Run</th>
          <th scope="col">Status</th>
          <th scope="col">Started</th>
          {statuses.map((s) => (
            <th scope="col" key={s}>
              {UNIT_STATUS_LABELS[s] ?? label(s)}
            </th>
          ))}
        </>
      }
    >
      {overview.runs.map((r, i) => (
        <tr key={r.run_id}>
          <th scope="row">
            {i + 1}
            {r.run_id === overview.current_run && <span className="muted"> (current)</span>}
          </th>
          <td>{label(r.run_id === overview.current_run && overview.state === 'complete' ? 'complete' : r.status)}</td>
          <td>{formatTime(r.started_at)}</td>
          {statuses.map((s) => (
            <td key={s}>{r.units[s] ?? 0}</td>
          ))}
        </tr>
      ))}
    </ScrollTable>
  );
}
