import { useCallback, useState } from 'react';
import { useDashboard } from './context';
import { JudgesPanel } from './JudgesPanel';
import { ReviewFiltersForm } from './ReviewFiltersForm';
import { ReviewList } from './ReviewList';
import { EMPTY_FILTERS, PAGE_SIZE, reviewQuery, type ReviewFilters } from './reviewQuery';
import { SubmissionDetail } from './SubmissionDetail';
import { usePoll } from './usePoll';
import { ViewState } from './ViewState';

/** The filterable list of submissions; opening one shows it as the worker saw it. */
export function ReviewView() {
  const [filters, setFilters] = useState<ReviewFilters>(EMPTY_FILTERS);
  const [offset, setOffset] = useState(0);
  const [opened, setOpened] = useState<string | null>(null);
  const [closed, setClosed] = useState<string | null>(null);

  if (opened) {
    return (
      <SubmissionDetail
        unitId={opened}
        onClose={() => {
          setClosed(opened);
          setOpened(null);
        }}
      />
    );
  }
  return (
    <ReviewListView
      filters={filters}
      offset={offset}
      onFilters={(f) => {
        setFilters(f);
        setOffset(0);
      }}
      onOffset={setOffset}
      onOpen={setOpened}
      focusUnit={closed}
    />
  );
}

interface ListProps {
  filters: ReviewFilters;
  offset: number;
  onFilters: (f: ReviewFilters) => void;
  onOffset: (offset: number) => void;
  onOpen: (unitId: string) => void;
  /** The unit just closed: its Open button gets the focus back. */
  focusUnit: string | null;
}

function ReviewListView({ filters, offset, onFilters, onOffset, onOpen, focusUnit }: ListProps) {
  const { client, loaded } = useDashboard();
  const query = reviewQuery(filters, offset, PAGE_SIZE);
  const load = useCallback(() => client.review(query), [client, query]);
  const { data, error, refresh } = usePoll(load, query, loaded);
  return (
    <>
      <h2 className="view-title">Review</h2>
      <JudgesPanel />
      <ReviewFiltersForm filters={filters} buckets={data?.buckets ?? []} onChange={onFilters} />
      <ViewState data={data} error={error}>
        {(page) => <ReviewList page={page} focusUnit={focusUnit} onOpen={onOpen} onOffset={onOffset} onChanged={() => void refresh()} />}
      </ViewState>
    </>
  );
}
