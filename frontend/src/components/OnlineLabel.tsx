import { useState } from 'react';
import type { DepContext } from '../dependencies';
import type { Show } from '../display';
import type { Bucket, BucketValue } from '../types';
import { valueText } from '../values';
import type { SubmitError } from './AnnotationSteps';
import type { HelpLink } from './TreeQuestions';
import { TurnAnswers } from './TurnAnswers';

interface Props {
  /** The message, as the worker reads it: "Partner's message 4". */
  name: string;
  bucket: Bucket;
  turn: DepContext;
  value: unknown;
  /** Texts of the bot's turn (`SPEAKER_X` = the bot). */
  show: Show;
  help: HelpLink | null;
  setValue: (fn: (old: unknown) => BucketValue | undefined) => void;
  /** The server refused the label (422): its message and problems. */
  refusal: SubmitError | null;
}

/** The online bucket's questions for one bot message, with the static page's renderers. */
export function OnlineLabel({ name, bucket, turn, value, show, help, setValue, refusal }: Props) {
  // Checkbox questions whose "None of these" the worker confirmed (seen.ts).
  const [none, setNone] = useState<ReadonlySet<string>>(() => new Set());
  return (
    <div className="chat-label" role="group" aria-label={`Your rating of ${name}`} data-message-index={turn.index ?? undefined}>
      <div className="chat-label-head">
        <span className="chat-label-title">Your rating of this message</span>
        {help && (
          <button type="button" className="link-button" aria-haspopup="dialog" aria-controls={help.dialogId} onClick={help.open}>
            Instructions
          </button>
        )}
      </div>
      <TurnAnswers
        bucket={bucket}
        turn={turn}
        value={value}
        show={show}
        help={help}
        setValue={setValue}
        none={none}
        setNone={setNone}
      />
      {refusal && (
        <div className="chat-alert" role="alert">
          <p>
            <strong>Your rating was not accepted:</strong> {refusal.message}
          </p>
          {refusal.problems.length > 0 && (
            <ul>
              {refusal.problems.map((p, i) => (
                <li key={i}>{show(p.message)}</li>
              ))}
            </ul>
          )}
        </div>
      )}
    </div>
  );
}

/** A label the server stored (final), in words. */
export function StoredLabel({ bucket, value, show }: { bucket: Bucket; value: unknown; show: Show }) {
  return (
    <p className="chat-label-done">
      <span className="chat-label-title">Your rating:</span> {valueText(bucket, value, 'system', show)}
    </p>
  );
}

/** What the latest bot message's label still misses before the worker may send or end. */
export function LabelHint({ id, name, missing }: { id: string; name: string; missing: string[] }) {
  return (
    <div className="missing chat-label-hint" id={id}>
      <span className="missing-title">
        {missing.length > 1 ? `Still to do before you go on (${missing.length}):` : 'Still to do before you go on:'}
      </span>{' '}
      <ul>
        {missing.map((m, i) => (
          <li key={i}>{`${name}: ${m}`}</li>
        ))}
      </ul>
    </div>
  );
}
