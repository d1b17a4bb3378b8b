import { useCallback } from 'react';
import type { Dialogue } from '../types';
import { useDashboard } from './context';
import { formatTime, label } from './format';
import { BucketList, isObject, type BucketAnswers } from './SubmissionView';
import type { UnitDetail, UnitJudge } from './types';
import { usePoll } from './usePoll';

/** What the LLM judges answered about the dialogues of this person's unit, judge by judge. */
export function JudgeAnswers({ unit }: { unit: UnitDetail }) {
  const { client } = useDashboard();
  const load = useCallback(() => client.unitJudges(unit.unit_id), [client, unit.unit_id]);
  const { data } = usePoll(load, `judges-${unit.unit_id}`);
  if (!data || data.judges.length === 0) return null;
  const dialogues = unit.payload?.dialogues ?? [];
  return (
    <section className="judge-answers" aria-labelledby="judge-answers-heading">
      <h3 id="judge-answers-heading" className="section-title">
        What the LLM judges answered
      </h3>
      <p className="muted small">Kept apart from the people&apos;s answers; the same dialogues, each judge in its own order.</p>
      {data.judges.map((judge) => (
        <JudgePanel key={judge.unit_id} judge={judge} dialogues={dialogues} buckets={unit.payload?.buckets ?? {}} />
      ))}
    </section>
  );
}

function JudgePanel({
  judge,
  dialogues,
  buckets,
}: {
  judge: UnitJudge;
  dialogues: Dialogue[];
  buckets: NonNullable<UnitDetail['payload']>['buckets'];
}) {
  const answers = isObject(judge.answers) ? judge.answers : {};
  const keys = [...dialogues.map((d) => d.key), ...Object.keys(answers).filter((k) => !dialogues.some((d) => d.key === k))];
  const settings = isObject(judge.summary?.settings) ? judge.summary.settings : {};
  const heading = `Judge ${judge.judge}`;
  return (
    <section className="panel judge-panel" aria-label={heading}>
      <h4>
        {heading}{' '}
        <span className="muted small">
          {settings.model ? `${String(settings.model)} · ` : ''}
          {judge.submitted_at ? `answered ${formatTime(judge.submitted_at)}` : label(judge.status)}
        </span>
      </h4>
      {judge.answers === null ? (
        <>
          <p className="muted">Not answered yet{judge.failures.length ? ': these questions failed' : ''}.</p>
          {judge.failures.length > 0 && (
            <ul className="judge-failures">
              {judge.failures.map((f, i) => (
                <li key={i}>
                  <span className="mono">{f.dialogue_key}</span> {f.bucket} ({f.outcome}): {f.reason ?? '–'}
                </li>
              ))}
            </ul>
          )}
        </>
      ) : (
        keys
          .filter((key) => isObject(answers[key]))
          .map((key) => {
            const position = dialogues.findIndex((d) => d.key === key);
            return (
              <div key={key} className="judge-dialogue">
                <h5>{position >= 0 ? `Dialogue ${position + 1}` : `Answers for ${key}`}</h5>
                <BucketList answers={answers[key] as BucketAnswers} buckets={buckets ?? {}} />
              </div>
            );
          })
      )}
    </section>
  );
}
