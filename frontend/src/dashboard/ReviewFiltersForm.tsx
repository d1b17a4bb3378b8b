import { useEffect, useState } from 'react';
import { label } from './format';
import {
  DECISION_OPTIONS,
  EMPTY_FILTERS,
  FLAG_OPTIONS,
  POOL_OPTIONS,
  STATUS_OPTIONS,
  type ReviewFilters,
} from './reviewQuery';

interface Props {
  filters: ReviewFilters;
  /** Every bucket name of the task (the server lists them). */
  buckets: string[];
  onChange: (filters: ReviewFilters) => void;
}

const DECISION_TEXT: Record<string, string> = {
  none: 'Not decided',
  approve: 'Approved',
  reject: 'Rejected',
  soft_reject: 'Soft-rejected',
};

/** Selects apply at once; the worker field applies on Enter or **Apply**. */
export function ReviewFiltersForm({ filters, buckets, onChange }: Props) {
  const [worker, setWorker] = useState(filters.worker);
  useEffect(() => setWorker(filters.worker), [filters.worker]);

  function select(key: keyof ReviewFilters, options: string[], text: (v: string) => string, name: string) {
    return (
      <div className="field">
        <label htmlFor={`filter-${key}`}>{name}</label>
        <select
          id={`filter-${key}`}
          value={filters[key]}
          onChange={(e) => onChange({ ...filters, worker, [key]: e.target.value })}
        >
          <option value="">All</option>
          {options.map((o) => (
            <option key={o} value={o}>
              {text(o)}
            </option>
          ))}
        </select>
      </div>
    );
  }

  return (
    <form
      className="filters"
      aria-label="Filters"
      onSubmit={(e) => {
        e.preventDefault();
        onChange({ ...filters, worker: worker.trim() });
      }}
    >
      <div className="field">
        <label htmlFor="filter-worker">Worker</label>
        <input
          id="filter-worker"
          type="search"
          placeholder="w_…"
          value={worker}
          onChange={(e) => setWorker(e.target.value)}
        />
      </div>
      {select('status', STATUS_OPTIONS, label, 'Status')}
      {select('decision', DECISION_OPTIONS, (v) => DECISION_TEXT[v] ?? label(v), 'Decision')}
      {select('bucket', buckets, (v) => v, 'Bucket')}
      {select('flag', FLAG_OPTIONS, label, 'Flag')}
      {select('pool', POOL_OPTIONS, label, 'Pool')}
      <div className="button-row filters-buttons">
        <button type="submit" className="btn btn-small">
          Apply
        </button>
        <button
          type="button"
          className="btn btn-small btn-quiet"
          onClick={() => {
            setWorker('');
            onChange(EMPTY_FILTERS);
          }}
        >
          Clear filters
        </button>
      </div>
    </form>
  );
}
