import { useCallback } from 'react';
import { humanize } from '../display';
import { useDashboard } from './context';
import { ReportLink } from './ReportLink';
import type { QuestionResult } from './types';
import { usePoll } from './usePoll';
import { ViewState } from './ViewState';

const REPORT_URL = '/api/requester/report';
const NO_ANSWER = 'No answer';

/** Answer counts per bucket and question, and the downloads. */
export function ResultsView() {
  const { client, loaded } = useDashboard();
  const load = useCallback(() => client.results(), [client]);
  const { data, error } = usePoll(load, 'results', loaded);
  return (
    <>
      <h2 className="view-title">Results</h2>
      <ViewState data={data} error={error}>
        {(results) => (
          <>
            <section className="panel" aria-labelledby="downloads-heading">
              <h3 id="downloads-heading">Downloads</h3>
              {results.downloads.length === 0 ? (
                <p className="muted">Nothing to download yet.</p>
              ) : (
                <ul className="downloads">
                  {results.downloads.map((d) => (
                    <li key={d.url}>
                      {d.url === REPORT_URL ? (
                        <ReportLink url={d.url} label={d.label} />
                      ) : (
                        <a href={d.url} download>
                          {d.label}
                        </a>
                      )}
                    </li>
                  ))}
                </ul>
              )}
            </section>
            <p className="muted small">Counts over the main pool's submissions (not training or gold units).</p>
            {results.questions.length === 0 ? (
              <p className="muted">No answers yet.</p>
            ) : (
              results.questions.map((q) => <QuestionCounts key={`${q.bucket}/${q.question}`} result={q} />)
            )}
          </>
        )}
      </ViewState>
    </>
  );
}

function QuestionCounts({ result }: { result: QuestionResult }) {
  const entries: Array<[string, number, boolean]> = Object.entries(result.answers).map(([answer, n]) => [
    result.labels?.[answer] ?? answer,
    n,
    false,
  ]);
  if (result.no_answer) entries.push([NO_ANSWER, result.no_answer, true]);
  const max = Math.max(1, ...entries.map(([, n]) => n));
  const title = result.text || humanize(result.question);
  const id = `q-${result.bucket}-${result.question}`.replace(/[^A-Za-z0-9_-]/g, '_');
  return (
    <section className="panel result" aria-labelledby={id}>
      <h3 id={id}>
        <span className="result-bucket">{humanize(result.bucket)}</span> {title}
      </h3>
      <p className="muted small">
        {result.n} answer{result.n === 1 ? '' : 's'}
        {result.several && ' (several options may be ticked in one answer, so the counts add up to more)'}
      </p>
      <table className="data counts">
        <thead>
          <tr>
            <th scope="col">Answer</th>
            <th scope="col">Count</th>
            <th scope="col" className="bar-col">
              <span className="sr-only">Share</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {entries.map(([answer, count, missing]) => (
            <tr key={`${missing}-${answer}`} className={missing ? 'muted' : undefined}>
              <th scope="row">{answer}</th>
              <td className="num">{count}</td>
              <td className="bar-col" aria-hidden="true">
                <span className="bar" style={{ width: `${(count / max) * 100}%` }} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
