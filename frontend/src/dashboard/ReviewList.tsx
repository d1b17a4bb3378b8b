import { useEffect, useRef, useState } from 'react';
import { ActionMessage, type Outcome } from './ActionMessage';
import { messageOf, useDashboard } from './context';
import { DecisionBadge } from './DecisionBadge';
import { formatDuration, formatTime, label } from './format';
import { ScrollTable } from './ScrollTable';
import type { ReviewPage } from './types';

interface Props {
  page: ReviewPage;
  onOpen: (unitId: string) => void;
  onOffset: (offset: number) => void;
  onChanged: () => void;
  /** Move the focus to this unit's Open button once (after closing it). */
  focusUnit?: string | null;
}

/** One page of submissions: checkboxes, **Approve selected**, paging, **Open** per row. */
export function ReviewList({ page, onOpen, onOffset, onChanged, focusUnit }: Props) {
  const { client, announce } = useDashboard();
  const table = useRef<HTMLDivElement>(null);
  const focused = useRef(false);
  useEffect(() => {
    if (focused.current || !focusUnit) return;
    focused.current = true;
    const rows = Array.from(table.current?.querySelectorAll<HTMLTableRowElement>('tr[data-unit-id]') ?? []);
    rows.find((r) => r.dataset.unitId === focusUnit)?.querySelector<HTMLButtonElement>('button.link-button')?.focus();
  }, [focusUnit]);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<Outcome | null>(null);

  const selectable = page.items.filter((i) => !i.decision).map((i) => i.unit_id);
  const chosen = selectable.filter((id) => selected.has(id));
  const allChosen = selectable.length > 0 && chosen.length === selectable.length;

  function toggle(id: string, on: boolean) {
    const next = new Set(selected);
    if (on) next.add(id);
    else next.delete(id);
    setSelected(next);
  }

  async function approveSelected() {
    setBusy(true);
    setOutcome(null);
    try {
      const { results } = await client.bulkApprove(chosen);
      const failed = results.filter((r) => !r.ok);
      const ok = results.length - failed.length;
      const text =
        `${ok} approved.` +
        (failed.length
          ? ` ${failed.length} not: ${failed.map((r) => `${r.unit_id}: ${'error' in r ? r.error : ''}`).join('; ')}`
          : '');
      setOutcome({ ok: failed.length === 0, text });
      announce(text);
      setSelected(new Set(failed.map((r) => r.unit_id)));
    } catch (e) {
      setOutcome({ ok: false, text: messageOf(e) });
    } finally {
      setBusy(false);
      onChanged();
    }
  }

  const first = page.total === 0 ? 0 : page.offset + 1;
  const last = page.offset + page.items.length;
  return (
    <section aria-labelledby="review-list-heading">
      <div className="list-head">
        <h3 id="review-list-heading" className="list-count">
          {page.total === 0 ? 'No submissions match' : `Submissions ${first}–${last} of ${page.total}`}
        </h3>
        <button
          type="button"
          className="btn btn-primary btn-small"
          disabled={busy || chosen.length === 0}
          onClick={() => void approveSelected()}
        >
          Approve selected{chosen.length ? ` (${chosen.length})` : ''}
        </button>
      </div>
      <ActionMessage outcome={outcome} />
      {page.items.length > 0 && (
        <ScrollTable
          ref={table}
          labelledBy="review-list-heading"
          className="review"
          head={
            <>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every undecided submission on this page"
                  checked={allChosen}
                  disabled={selectable.length === 0}
                  onChange={(e) => setSelected(e.target.checked ? new Set(selectable) : new Set())}
                />
              </th>
              <th scope="col">Unit</th>
              <th scope="col">Worker</th>
              <th scope="col">Submitted</th>
              <th scope="col">Time</th>
              <th scope="col">Status</th>
              <th scope="col">Decision</th>
              <th scope="col">Checks</th>
              <th scope="col">Buckets / bots</th>
            </>
          }
        >
          {page.items.map((item) => (
            <tr key={item.unit_id} data-unit-id={item.unit_id}>
              <td>
                <input
                  type="checkbox"
                  aria-label={`Select ${item.unit_id}`}
                  disabled={!!item.decision}
                  checked={selected.has(item.unit_id) && !item.decision}
                  onChange={(e) => toggle(item.unit_id, e.target.checked)}
                />
              </td>
              <th scope="row">
                <button
                  type="button"
                  className="link-button mono"
                  aria-label={`Open ${item.unit_id}`}
                  onClick={() => onOpen(item.unit_id)}
                >
                  {item.unit_id}
                </button>
                <span className="cell-note">
                  {label(item.kind)} · {item.pool}
                </span>
              </th>
              <td className="mono">{item.worker ?? '–'}</td>
              <td>{formatTime(item.submitted_at)}</td>
              <td>{formatDuration(item.duration_s)}</td>
              <td>{label(item.status)}</td>
              <td>
                <DecisionBadge decision={item.decision} />
              </td>
              <td>
                {item.flagged && <span className="chip flag">Flagged</span>}
                {item.verified === false && <span className="chip flag">Unverified</span>}
                {!item.flagged && item.verified !== false && '–'}
              </td>
              <td className="wrap">{[...item.buckets, ...item.bots].join(', ') || '–'}</td>
            </tr>
          ))}
        </ScrollTable>
      )}
      {page.total > page.limit && (
        <nav className="pager" aria-label="Pages">
          <button
            type="button"
            className="btn btn-small"
            disabled={page.offset === 0}
            onClick={() => onOffset(Math.max(0, page.offset - page.limit))}
          >
            Previous page
          </button>
          <span className="muted small">
            Page {Math.floor(page.offset / page.limit) + 1} of {Math.ceil(page.total / page.limit)}
          </span>
          <button
            type="button"
            className="btn btn-small"
            disabled={last >= page.total}
            onClick={() => onOffset(page.offset + page.limit)}
          >
            Next page
          </button>
        </nav>
      )}
    </section>
  );
}
