import { bucketLabel, formatHourMinute, formatTime } from './format';
import type { ThroughputPoint } from './types';

interface Props {
  bucketSeconds: number;
  points: ThroughputPoint[];
}

const WIDTH = 600;
const HEIGHT = 160;
const AXIS = 18;

/**
 * Submissions per time bucket as an inline SVG bar chart. The SVG is hidden from assistive
 * technology; a visually hidden table gives the same numbers as text.
 */
export function ThroughputChart({ bucketSeconds, points }: Props) {
  if (points.length === 0) return <p className="muted">No submissions yet.</p>;
  const max = Math.max(1, ...points.map((p) => p.submissions));
  const slot = WIDTH / points.length;
  const bar = Math.max(1, slot * 0.8);
  const plot = HEIGHT - AXIS;
  const total = points.reduce((sum, p) => sum + p.submissions, 0);
  const every = Math.max(1, Math.ceil(points.length / 6));
  return (
    <figure className="chart">
      <svg
        viewBox={`0 0 ${WIDTH} ${HEIGHT}`}
        className="chart-svg"
        aria-hidden="true"
        focusable="false"
        preserveAspectRatio="none"
      >
        <line x1="0" y1={plot} x2={WIDTH} y2={plot} className="chart-axis" />
        {points.map((p, i) => {
          const h = (p.submissions / max) * (plot - 4);
          return (
            <rect key={p.t} x={i * slot + (slot - bar) / 2} y={plot - h} width={bar} height={h} className="chart-bar">
              <title>{`${formatHourMinute(p.t)}: ${p.submissions}`}</title>
            </rect>
          );
        })}
      </svg>
      <div className="chart-labels" aria-hidden="true">
        {points.map((p, i) =>
          i % every === 0 ? (
            <span key={p.t} style={{ left: `${((i + 0.5) / points.length) * 100}%` }}>
              {formatHourMinute(p.t)}
            </span>
          ) : null,
        )}
      </div>
      <figcaption className="muted small">
        {total} submission{total === 1 ? '' : 's'}, per {bucketLabel(bucketSeconds)}; the highest bar is {max}.
      </figcaption>
      <table className="sr-only">
        <caption>Submissions per {bucketLabel(bucketSeconds)}</caption>
        <thead>
          <tr>
            <th scope="col">From</th>
            <th scope="col">Submissions</th>
          </tr>
        </thead>
        <tbody>
          {points.map((p) => (
            <tr key={p.t}>
              <td>{formatTime(p.t)}</td>
              <td>{p.submissions}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </figure>
  );
}
