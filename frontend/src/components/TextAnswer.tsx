/** A free-text answer: a text bucket's answer or an "Explain your answer" field. */
import { useId } from 'react';
import { EXPLAIN_QUESTION } from '../explain';
import type { TextLimits } from '../types';
import { textLength } from '../values';

interface Props {
  label: string;
  limits: TextLimits;
  value: string;
  onChange: (text: string) => void;
  /** Said after the label, e.g. "(optional)". */
  note?: string;
  className?: string;
}

/**
 * A text box (one line unless `multiline`) that takes at most `max_chars` characters, with a
 * counter that says how many it needs at least.
 */
export function TextAnswer({ label, limits, value, onChange, note, className = 'text-answer' }: Props) {
  const id = useId();
  const counterId = useId();
  const min = limits.min_chars;
  const common = {
    id,
    value,
    maxLength: limits.max_chars,
    'aria-describedby': counterId,
    onChange: (e: { currentTarget: { value: string } }) => onChange(e.currentTarget.value),
  };
  return (
    <div className={className}>
      <label htmlFor={id}>
        {label}
        {note && (
          <>
            {' '}
            <span className="muted">{note}</span>
          </>
        )}
      </label>
      {limits.multiline ? <textarea rows={4} {...common} /> : <input type="text" {...common} />}
      <span id={counterId} className="muted small text-counter">
        {textLength(value)} / {limits.max_chars} characters{min > 1 ? ` (at least ${min})` : ''}
      </span>
    </div>
  );
}

/** The "Explain your answer" field under an answer (`"explain": true`). */
export function ExplainField({ limits, value, onChange }: { limits: TextLimits; value: string; onChange: (text: string) => void }) {
  return (
    <TextAnswer
      label={EXPLAIN_QUESTION}
      note={limits.min_chars === 0 ? '(optional)' : undefined}
      limits={limits}
      value={value}
      onChange={onChange}
      className="text-answer is-explain"
    />
  );
}
