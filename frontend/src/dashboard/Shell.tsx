import { useCallback, useEffect, useMemo, useState } from 'react';
import type { RequesterClient } from './api';
import { Dashboard, messageOf, type DashboardContext } from './context';
import { ArenaView } from './ArenaView';
import { clockTime } from './format';
import { OverviewView } from './OverviewView';
import { ResultsView } from './ResultsView';
import { ReviewView } from './ReviewView';
import { Tabs, type TabSpec } from './Tabs';
import type { Session } from './types';
import { WorkersView } from './WorkersView';

export const TABS: readonly TabSpec[] = [
  { id: 'overview', label: 'Overview' },
  { id: 'workers', label: 'Workers' },
  { id: 'review', label: 'Review' },
  { id: 'results', label: 'Results' },
  { id: 'arena', label: 'Leaderboard' },
];

/** The tab named by the address's hash (`#review`, also `#review/<unit id>`), else Overview. */
export function tabFromHash(hash: string): string {
  const id = hash.replace(/^#/, '').split('/')[0];
  return TABS.some((t) => t.id === id) ? id : 'overview';
}

interface Props {
  client: RequesterClient;
  session: Session;
  onSignedOut: () => void;
}

/** The signed-in page: top bar (task, "Updated …", Sign out), the tabs and the current view. */
export function Shell({ client, session, onSignedOut }: Props) {
  const [tab, setTab] = useState(() => tabFromHash(window.location.hash));
  const [updated, setUpdated] = useState<Date | null>(null);
  const [announcement, setAnnouncement] = useState('');
  const [provider, setProvider] = useState<string | null>(null);
  const [arena, setArena] = useState(false);
  const [signOutError, setSignOutError] = useState<string | null>(null);

  useEffect(() => {
    const onHash = () => setTab(tabFromHash(window.location.hash));
    window.addEventListener('hashchange', onHash);
    return () => window.removeEventListener('hashchange', onHash);
  }, []);

  useEffect(() => {
    // The provider decides whether a reject offers Prolific's categories.
    let alive = true;
    client.overview().then(
      (o) => {
        if (!alive) return;
        setProvider(o.provider);
        setArena(o.arena === true);
      },
      () => undefined,
    );
    return () => {
      alive = false;
    };
  }, [client]);

  const select = useCallback((id: string) => {
    setTab((was) => {
      if (was !== id) setUpdated(null);
      return id;
    });
    if (window.location.hash !== `#${id}`) window.history.replaceState(null, '', `#${id}`);
  }, []);

  const announce = useCallback((message: string) => {
    // Clear first so that the same message twice is read twice.
    setAnnouncement('');
    window.setTimeout(() => setAnnouncement(message), 30);
  }, []);

  const context = useMemo<DashboardContext>(
    () => ({ client, announce, loaded: setUpdated, provider }),
    [client, announce, provider],
  );

  async function signOut() {
    setSignOutError(null);
    try {
      await client.signOut();
      onSignedOut();
    } catch (e) {
      setSignOutError(`Could not sign out: ${messageOf(e)}`);
    }
  }

  // The leaderboard is an arena's alone.
  const tabs = arena ? TABS : TABS.filter((t) => t.id !== 'arena');
  const current = tabs.find((t) => t.id === tab) ?? tabs[0];
  return (
    <Dashboard.Provider value={context}>
      <div className="app dash">
        <header className="topbar dash-top">
          <div className="dash-title">
            <p className="dash-kicker">Requester dashboard</p>
            <h1 className="task-title">{session.task}</h1>
          </div>
          <div className="topbar-status">
            <p className="dash-updated" data-testid="updated">
              {updated ? `Updated ${clockTime(updated)}` : 'Updating…'}
            </p>
            <button type="button" className="btn btn-small" onClick={() => void signOut()}>
              Sign out
            </button>
          </div>
          <nav className="dash-nav" aria-label="Dashboard sections">
            <Tabs tabs={tabs} current={current.id} onSelect={select} label="Dashboard sections" />
          </nav>
        </header>
        {signOutError && (
          <p className="banner is-error" role="alert">
            {signOutError}
          </p>
        )}
        <p className="sr-only" role="status" aria-live="polite" aria-atomic="true">
          {announcement}
        </p>
        <main
          className="content dash-content"
          id={`panel-${current.id}`}
          role="tabpanel"
          aria-labelledby={`tab-${current.id}`}
          tabIndex={-1}
        >
          {current.id === 'overview' && <OverviewView />}
          {current.id === 'workers' && <WorkersView />}
          {current.id === 'review' && <ReviewView />}
          {current.id === 'results' && <ResultsView />}
          {current.id === 'arena' && <ArenaView />}
        </main>
      </div>
    </Dashboard.Provider>
  );
}
