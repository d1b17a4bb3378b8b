/** Answer widgets for the non-tree configs. Values follow docs/worker-api.md exactly. */
import { useId } from 'react';
import type { Show } from '../display';
import type { Bucket } from '../types';
import { comparativeOptions, foreachOptions, likertOptions, multiselectOptions, ratingKeys } from '../values';
import { LikertScale } from './LikertScale';

function shownAnchors(bucket: Bucket, show: Show): Record<string, string> | null {
  if (!bucket.label_details) return null;
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(bucket.label_details)) if (typeof v === 'string') out[k] = show(v);
  return out;
}

/** `{key: rating}` in the bucket's option order, with `key` set to `rating`. */
function withRating(bucket: Bucket, value: Record<string, number> | undefined, key: string, rating: number) {
  const next: Record<string, number> = {};
  for (const k of ratingKeys(bucket)) {
    if (k === key) next[k] = rating;
    else if (value && typeof value[k] === 'number') next[k] = value[k];
  }
  return next;
}

/** `multiselect`: checkboxes; value is the list of chosen option values (`[]` = none apply). */
export function MultiselectQuestion({
  bucket,
  speaker,
  value,
  onChange,
  show,
}: {
  bucket: Bucket;
  speaker: string | null;
  value: string[] | undefined;
  onChange: (value: string[]) => void;
  show: Show;
}) {
  const options = multiselectOptions(bucket, speaker);
  const chosen = new Set(value ?? []);
  const toggle = (v: string, checked: boolean) => {
    onChange(options.filter((o) => (o.value === v ? checked : chosen.has(o.value))).map((o) => o.value));
  };
  return (
    <fieldset className="question is-checkbox">
      <legend>{show(bucket.question || 'Which labels fit this turn?')}</legend>
      {options.length === 0 ? (
        <p className="muted">No labels apply to this turn.</p>
      ) : (
        <ul className="options">
          {options.map((o) => (
            <li key={o.value} className={chosen.has(o.value) ? 'option is-checked' : 'option'}>
              <label>
                <input
                  type="checkbox"
                  value={o.value}
                  checked={chosen.has(o.value)}
                  onChange={(e) => toggle(o.value, e.currentTarget.checked)}
                />
                <span>{show(o.label ?? o.value)}</span>
              </label>
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}

/** `likert-5-turn` / `likert-5-dialogue`: one scale per option; value `{option_label: 1..5}`. */
export function LikertQuestions({
  bucket,
  value,
  onChange,
  show,
}: {
  bucket: Bucket;
  value: Record<string, number> | undefined;
  onChange: (value: Record<string, number>) => void;
  show: Show;
}) {
  const anchors = shownAnchors(bucket, show);
  return (
    <div className="ratings">
      {likertOptions(bucket).map((o) => (
        <LikertScale
          key={o.label}
          legend={show(o.question || o.label)}
          anchors={anchors}
          value={value?.[o.label]}
          onChange={(n) => onChange(withRating(bucket, value, o.label, n))}
        />
      ))}
    </div>
  );
}

/** `foreach-5-select` / `foreach-5-select-dialogue`: a 1–5 scale per option; value `{option_value: 1..5}`. */
export function ForeachQuestions({
  bucket,
  value,
  onChange,
  show,
}: {
  bucket: Bucket;
  value: Record<string, number> | undefined;
  onChange: (value: Record<string, number>) => void;
  show: Show;
}) {
  const questionId = useId();
  const anchors = shownAnchors(bucket, show);
  return (
    <div className="ratings foreach">
      <p className="foreach-question" id={questionId}>
        {show(bucket.question || 'Rate each from 1 (least) to 5 (most):')}
      </p>
      {foreachOptions(bucket).map((o) => (
        <LikertScale
          key={o.value}
          legend={show(o.label || o.value)}
          anchors={anchors}
          describedBy={questionId}
          value={value?.[o.value]}
          onChange={(n) => onChange(withRating(bucket, value, o.value, n))}
          legendClassName="compact-legend"
        />
      ))}
    </div>
  );
}

/** `comparative`: one question, radio options; value is the chosen option string. */
export function ComparativeQuestion({
  bucket,
  value,
  onChange,
  show,
}: {
  bucket: Bucket;
  value: string | undefined;
  onChange: (value: string) => void;
  show: Show;
}) {
  const name = useId();
  return (
    <fieldset className="question">
      <legend>{show(bucket.question || 'Which dialogue is better?')}</legend>
      <ul className="options">
        {comparativeOptions(bucket).map((o, i) => (
          <li key={o} className={value === o ? 'option is-checked' : 'option'}>
            <label>
              <input type="radio" name={name} value={String(i)} checked={value === o} onChange={() => onChange(o)} />
              <span>{show(o)}</span>
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}
