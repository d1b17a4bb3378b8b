import { createContext, useContext } from 'react';
import type { RequesterClient } from './api';

export interface DashboardContext {
  client: RequesterClient;
  /** Says `message` in the page's polite live region (status messages). */
  announce: (message: string) => void;
  /** A view loaded fresh data at this time ("Updated hh:mm:ss"). */
  loaded: (at: Date) => void;
  /** The task's provider (`local`, `prolific`, …), once known. */
  provider: string | null;
}

export const Dashboard = createContext<DashboardContext | null>(null);

export function useDashboard(): DashboardContext {
  const value = useContext(Dashboard);
  if (!value) throw new Error('useDashboard outside the dashboard');
  return value;
}

export { messageOf } from '../api';
