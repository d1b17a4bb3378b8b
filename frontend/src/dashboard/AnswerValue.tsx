import { isIdentifierKey, questionLabel } from '../display';

const asText = (s: string) => s;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function keyLabel(key: string): string {
  return isIdentifierKey(key) ? questionLabel(key, asText) : key;
}

/**
 * A stored answer, read-only and as text: a label list, 1–5 ratings, a comparison's choice or a
 * question tree (question: answer, nested answers indented). Never rendered as HTML.
 */
export function AnswerValue({ value }: { value: unknown }) {
  if (value === null || value === undefined) return <span className="muted">no answer</span>;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return <span className="answer-text">{String(value)}</span>;
  }
  if (Array.isArray(value)) {
    if (value.length === 0) return <span className="muted">none selected</span>;
    return <span className="answer-text">{value.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join(', ')}</span>;
  }
  if (!isPlainObject(value)) return <span className="answer-text">{JSON.stringify(value)}</span>;
  if ('option' in value && 'side' in value) {
    return (
      <span className="answer-text">
        {String(value.option)} <span className="muted">({String(value.side)})</span>
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
            {keyLabel(k)}: <strong>{String(v)}</strong>
          </li>
        ))}
      </ul>
    );
  }
  return <TreeAnswer value={value} />;
}

/** `{question: {answer: {sub_question: {...}}}}` as nested lists. */
function TreeAnswer({ value }: { value: Record<string, unknown> }) {
  return (
    <ul className="answer-list">
      {Object.entries(value).map(([question, chosen]) => {
        const answers = isPlainObject(chosen) ? Object.entries(chosen) : [];
        return (
          <li key={question}>
            <span className="muted">{keyLabel(question)}:</span>{' '}
            {answers.length === 0 ? (
              isPlainObject(chosen) ? (
                <span className="muted">none</span>
              ) : (
                <AnswerValue value={chosen} />
              )
            ) : (
              answers.map(([answer, sub], i) => (
                <span key={answer}>
                  {i > 0 && ', '}
                  <strong>{answer}</strong>
                  {isPlainObject(sub) && Object.keys(sub).length > 0 && <TreeAnswer value={sub} />}
                </span>
              ))
            )}
          </li>
        );
      })}
    </ul>
  );
}
