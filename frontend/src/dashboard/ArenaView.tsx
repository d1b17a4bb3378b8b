import { useCallback } from 'react';
import { useDashboard } from './context';
import { formatRate } from './format';
import { ScrollTable } from './ScrollTable';
import type { ArenaLeaderboard } from './types';
import { usePoll } from './usePoll';
import { ViewState } from './ViewState';

const score = (value: number | null) => (value === null ? '–' : value.toFixed(0));
const range = (low: number | null, high: number | null, show: (v: number | null) => string) =>
  low === null || high === null ? '–' : `${show(low)} – ${show(high)}`;

/** An arena's live leaderboard (docs/arena.md): as `analyze` computes it, polled. */
export function ArenaView() {
  const { client, loaded } = useDashboard();
  const load = useCallback(() => client.arena(), [client]);
  const { data, error } = usePoll(load, 'arena', loaded);
  return (
    <>
      <h2 className="view-title">Arena leaderboard</h2>
      <ViewState data={data} error={error}>
        {({ leaderboard, resamples }) =>
          leaderboard === null || leaderboard.ranking.length === 0 ? (
            <p className="muted">No battles submitted yet.</p>
          ) : (
            <Board board={leaderboard} resamples={resamples} />
          )
        }
      </ViewState>
    </>
  );
}

function Board({ board, resamples }: { board: ArenaLeaderboard; resamples: number }) {
  const bias = board.position_bias;
  return (
    <>
      <p className="muted small">
        {board.battles} vote{board.battles === 1 ? '' : 's'} of submitted battles. Bradley-Terry scores on the Elo scale
        with 95% bootstrap intervals ({resamples} resamples); a tie or "both bad" counts as half a win for each side.
      </p>
      <ScrollTable
        caption="Ranking"
        head={
          <>
            <th scope="col">Rank</th>
            <th scope="col">Rank interval</th>
            <th scope="col">Bot</th>
            <th scope="col">Score</th>
            <th scope="col">Score interval</th>
            <th scope="col">Battles</th>
            <th scope="col">Win rate</th>
          </>
        }
      >
        {board.ranking.map((r) => (
          <tr key={r.bot}>
            <td>{r.rank}</td>
            <td>{range(r.rank_ci_low, r.rank_ci_high, String)}</td>
            <th scope="row">{r.bot}</th>
            <td>{score(r.elo)}</td>
            <td>{range(r.elo_ci_low, r.elo_ci_high, score)}</td>
            <td>{r.battles}</td>
            <td>{formatRate(r.win_rate)}</td>
          </tr>
        ))}
      </ScrollTable>
      <ScrollTable
        caption="Pairs"
        head={
          <>
            <th scope="col">Pair</th>
            <th scope="col">Battles</th>
            <th scope="col">First wins</th>
            <th scope="col">Second wins</th>
            <th scope="col">Ties</th>
            <th scope="col">Both bad</th>
            <th scope="col">First's win rate</th>
          </>
        }
      >
        {board.pairs.map((p) => (
          <tr key={`${p.bot_a}/${p.bot_b}`}>
            <th scope="row">
              {p.bot_a} vs {p.bot_b}
            </th>
            <td>{p.battles}</td>
            <td>{p.wins_a}</td>
            <td>{p.wins_b}</td>
            <td>{p.ties}</td>
            <td>{p.bothbad}</td>
            <td>{formatRate(p.win_rate_a)}</td>
          </tr>
        ))}
      </ScrollTable>
      {bias && bias.decisive > 0 && (
        <p>
          Position bias: Model A (left) won {formatRate(bias.model_a_share)} of {bias.decisive} decisive votes (95%
          interval {formatRate(bias.ci_low)} – {formatRate(bias.ci_high)}).
        </p>
      )}
      <section className="panel" aria-labelledby="arena-outliers">
        <h3 id="arena-outliers">Outlier voters</h3>
        {board.outlier_voters.length === 0 ? (
          <p className="muted">No voter's votes run against the ranking more than chance allows.</p>
        ) : (
          <ul>
            {board.outlier_voters.map((o) => (
              <li key={o.judge}>
                {o.judge}: {o.against} of {o.decisive_votes} decisive votes against the ranking (about{' '}
                {o.expected_against} expected)
              </li>
            ))}
          </ul>
        )}
      </section>
    </>
  );
}
