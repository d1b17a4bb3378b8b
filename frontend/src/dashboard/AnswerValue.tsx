import { isIdentifierKey, questionLabel, type Show } from '../display';

const asText: Show = (s) => s;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keyLabel(key: string, show: Show): string {
  return isIdentifierKey(key) ? questionLabel(key, show) : show(key);
}

/**
 * A stored answer, read-only and as text: a label list, 1–5 ratings, a comparison's choice or a
 * question tree (question: answer, nested answers indented). Never rendered as HTML.
 */
export function AnswerValue({ value, show = asText }: { value: unknown; show?: Show }) {
  if (value === null || value === undefined) return <span className="muted">no answer</span>;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return <span className="answer-text">{typeof value === 'string' ? show(value) : String(value)}</span>;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none selected</span>;
    return <span className="answer-text">{value.map((v) => (typeof v === 'string' ? show(v) : JSON.stringify(v))).join(', ')}</span>;
  }
  if (!isPlainObject(value)) return <span className="answer-text">{JSON.stringify(value)}</span>;
  if ('option' in value && 'side' in value) {
    return (
      <span className="answer-text">
        {show(String(value.option))} <span className="muted">({String(value.side)})</span>
      </span>
    );
  }
  const entries = Object.entries(value);
  if (entries.length === 0) return <span className="muted">none selected</span>;
  if (entries.every(([, v]) => typeof v === 'number' || typeof v === 'string')) {
    return (
      <ul className="answer-list">
        {entries.map(([k, v]) => (
          <li key={k}>
            {keyLabel(k, show)}: <strong>{typeof v === 'string' ? show(v) : String(v)}</strong>
          </li>
        ))}
      </ul>
    );
  }
  return <TreeAnswer value={value} show={show} />;
}

/** `{question: {answer: {sub_question: {...}}}}` as nested lists. */
function TreeAnswer({ value, show }: { value: Record<string, unknown>; show: Show }) {
  return (
    <ul className="answer-list">
      {Object.entries(value).map(([question, chosen]) => {
        const answers = isPlainObject(chosen) ? Object.entries(chosen) : [];
        return (
          <li key={question}>
            <span className="muted">{keyLabel(question, show)}:</span>{' '}
            {answers.length === 0 ? (
              isPlainObject(chosen) ? (
                <span className="muted">none</span>
              ) : (
                <AnswerValue value={chosen} show={show} />
              )
            ) : (
              answers.map(([answer, sub], i) => (
                <span key={answer}>
                  {i > 0 && ', '}
                  <strong>{show(answer)}</strong>
                  {isPlainObject(sub) && Object.keys(sub).length > 0 && <TreeAnswer value={sub} show={show} />}
                </span>
              ))
            )}
          </li>
        );
      })}
    </ul>
  );
}
