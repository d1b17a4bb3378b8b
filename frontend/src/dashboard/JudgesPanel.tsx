import { useCallback } from 'react';
import { useDashboard } from './context';
import { formatTime } from './format';
import { ScrollTable } from './ScrollTable';
import { usePoll } from './usePoll';

function count(value: number | null): string {
  return value === null ? '–' : value.toLocaleString('en');
}

/** The task's LLM judges, apart from the people's submissions: progress, calls and cost. */
export function JudgesPanel() {
  const { client } = useDashboard();
  const load = useCallback(() => client.judges(), [client]);
  const { data } = usePoll(load, 'judges');
  if (!data || data.judges.length === 0) return null;
  return (
    <section className="panel judges-panel" aria-labelledby="judges-heading">
      <h3 id="judges-heading">LLM judges</h3>
      <p className="muted small">
        Their answers are kept apart: not in this list, the progress or the exports (unless asked). Open a
        submission to see what they answered about the same dialogues.
      </p>
      <ScrollTable
        label="Judges' progress and cost"
        className="judges"
        head={
          <>
            <th scope="col">Judge</th>
            <th scope="col">Model</th>
            <th scope="col">Units answered</th>
            <th scope="col">Units open</th>
            <th scope="col">Calls</th>
            <th scope="col">Refused replies</th>
            <th scope="col">Failed calls</th>
            <th scope="col">Tokens in / out</th>
            <th scope="col">Cost</th>
            <th scope="col">Last call</th>
          </>
        }
      >
        {data.judges.map((j) => (
          <tr key={j.judge}>
            <th scope="row" className="mono">
              {j.judge}
            </th>
            <td>{String(j.settings.model ?? j.settings.type ?? '–')}</td>
            <td>{j.units_answered}</td>
            <td>{j.units_open}</td>
            <td>{j.calls}</td>
            <td>{j.invalid_replies}</td>
            <td className={j.failed_calls ? 'error-text' : undefined}>{j.failed_calls}</td>
            <td>
              {count(j.input_tokens)} / {count(j.output_tokens)}
            </td>
            <td>{j.cost === null ? '–' : j.cost.toFixed(4)}</td>
            <td>{formatTime(j.last_call_at)}</td>
          </tr>
        ))}
      </ScrollTable>
    </section>
  );
}
