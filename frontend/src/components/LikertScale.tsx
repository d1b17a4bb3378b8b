import { useId, useRef } from 'react';
import { SCALE } from '../values';

interface Props {
  legend: string;
  /** Scale anchors keyed "1".."5" (bucket `label_details`), shown as visible text. */
  anchors?: Record<string, string> | null;
  value: number | undefined;
  onChange: (rating: number) => void;
  /** Extra description ids (e.g. the bucket's question) for assistive technology. */
  describedBy?: string;
  legendClassName?: string;
}

/**
 * One 1–5 rating: a fieldset whose legend is the question, with radios labelled "1".."5".
 * While focus is inside the scale, the number keys 1–5 choose a rating.
 */
export function LikertScale({ legend, anchors, value, onChange, describedBy, legendClassName }: Props) {
  const name = useId();
  const anchorsId = useId();
  const refs = useRef<Array<HTMLInputElement | null>>([]);
  const anchorEntries = Object.entries(anchors ?? {})
    .filter(([k, v]) => /^[1-5]$/.test(k) && typeof v === 'string' && v)
    .sort(([a], [b]) => Number(a) - Number(b));
  const described = [anchorEntries.length > 0 ? anchorsId : null, describedBy ?? null].filter(Boolean).join(' ');

  const onKeyDown = (e: React.KeyboardEvent<HTMLFieldSetElement>) => {
    if (e.ctrlKey || e.metaKey || e.altKey) return;
    if (!/^[1-5]$/.test(e.key)) return;
    e.preventDefault();
    const rating = Number(e.key);
    onChange(rating);
    refs.current[rating - 1]?.focus();
  };

  return (
    <fieldset className="likert" aria-describedby={described || undefined} onKeyDown={onKeyDown}>
      <legend className={legendClassName}>{legend}</legend>
      <div className="likert-scale">
        {SCALE.map((n) => (
          <label key={n} className={value === n ? 'likert-point is-checked' : 'likert-point'}>
            <input
              ref={(el) => {
                refs.current[n - 1] = el;
              }}
              type="radio"
              name={name}
              value={n}
              checked={value === n}
              onChange={() => onChange(n)}
            />
            <span>{n}</span>
          </label>
        ))}
      </div>
      {anchorEntries.length > 0 && (
        <ul className="likert-anchors" id={anchorsId}>
          {anchorEntries.map(([k, text]) => (
            <li key={k} className={`anchor anchor-${k}`}>
              <span className="anchor-num">{k}</span> = {text}
            </li>
          ))}
        </ul>
      )}
    </fieldset>
  );
}
