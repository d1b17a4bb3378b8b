import { Fragment, useCallback, useState } from 'react';
import { useDashboard } from './context';
import { FLAG_LABELS, formatDuration, formatTime, label } from './format';
import { ScrollTable } from './ScrollTable';
import type { WorkerRow } from './types';
import { usePoll } from './usePoll';
import { ViewState } from './ViewState';
import { WorkerActions } from './WorkerActions';

/** Every worker of the task, with Block / Unblock and qualifications per row. */
export function WorkersView() {
  const { client, loaded } = useDashboard();
  const load = useCallback(() => client.workers(), [client]);
  const { data, error, refresh } = usePoll(load, 'workers', loaded);
  const [open, setOpen] = useState<string | null>(null);

  return (
    <>
      <h2 className="view-title">Workers</h2>
      <ViewState data={data} error={error}>
        {({ workers }) =>
          workers.length === 0 ? (
            <p className="muted">No worker has opened a link yet.</p>
          ) : (
            <ScrollTable
              label="Workers"
              className="workers"
              caption="Workers"
              captionHidden
              head={
                <>
                  <th scope="col">Worker</th>
                  <th scope="col">Units done</th>
                  <th scope="col">In progress</th>
                  <th scope="col">Median time</th>
                  <th scope="col">Screening</th>
                  <th scope="col">Gold</th>
                  <th scope="col">Qualifications</th>
                  <th scope="col">Flags</th>
                  <th scope="col">Actions</th>
                </>
              }
            >
              {workers.map((w) => (
                <Fragment key={w.pseudonym}>
                  <WorkerTableRow
                    worker={w}
                    expanded={open === w.pseudonym}
                    onToggle={() => setOpen(open === w.pseudonym ? null : w.pseudonym)}
                  />
                  {open === w.pseudonym && (
                    <tr className="row-detail">
                      <td colSpan={9} id={`manage-${w.pseudonym}`}>
                        <WorkerActions worker={w} onChanged={() => void refresh()} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </ScrollTable>
          )
        }
      </ViewState>
    </>
  );
}

function WorkerTableRow({ worker: w, expanded, onToggle }: { worker: WorkerRow; expanded: boolean; onToggle: () => void }) {
  return (
    <tr className={w.flags.includes('blocked') ? 'is-blocked' : undefined}>
      <th scope="row" className="mono">
        {w.pseudonym}
        <span className="cell-note">
          {w.provider} · seen {formatTime(w.last_seen)}
        </span>
      </th>
      <td>{w.units_done}</td>
      <td>{w.in_progress}</td>
      <td>{formatDuration(w.median_s)}</td>
      <td>{w.screening ? label(w.screening) : '–'}</td>
      <td>{w.gold && w.gold.passed + w.gold.failed > 0 ? `${w.gold.passed} passed, ${w.gold.failed} failed` : '–'}</td>
      <td className="wrap">
        {w.qualifications.length === 0
          ? '–'
          : w.qualifications.map((q) => (
              <span key={q.name} className="chip mono">
                {q.name}
                {q.value !== null && q.value !== undefined ? ` = ${q.value}` : ''}
              </span>
            ))}
      </td>
      <td className="wrap">
        {w.flags.length === 0
          ? '–'
          : w.flags.map((f) => (
              <span key={f} className={`chip flag flag-${f}`}>
                {FLAG_LABELS[f] ?? label(f)}
              </span>
            ))}
      </td>
      <td>
        <button
          type="button"
          className="btn btn-small"
          aria-expanded={expanded}
          aria-controls={expanded ? `manage-${w.pseudonym}` : undefined}
          aria-label={`Manage ${w.pseudonym}`}
          onClick={onToggle}
        >
          Manage
        </button>
      </td>
    </tr>
  );
}
