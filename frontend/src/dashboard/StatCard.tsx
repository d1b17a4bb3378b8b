import type { ReactNode } from 'react';

/** One figure of the overview: a title, a big value and a line of detail. */
export function StatCard({ title, value, children }: { title: string; value: ReactNode; children?: ReactNode }) {
  return (
    <section className="stat" aria-label={title}>
      <h3 className="stat-title">{title}</h3>
      <p className="stat-value">{value}</p>
      {children && <div className="stat-detail">{children}</div>}
    </section>
  );
}
