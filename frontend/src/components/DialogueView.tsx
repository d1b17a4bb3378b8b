import type { ReactNode } from 'react';
import { speakerLabel, turnNumber, type Show, type SpeakerNames } from '../display';
import type { Turn } from '../types';

interface Props {
  dialogueKey: string;
  turns: Turn[];
  persona?: string[] | null;
  names: SpeakerNames;
  show: Show;
  /** Heading shown above the dialogue (e.g. "Dialogue 1" in comparisons). */
  title?: string;
  side?: 1 | 2;
  targets?: ReadonlySet<number>;
  current?: number | null;
  /** Answer area rendered under a target turn. */
  renderAnswers?: (turn: Turn) => ReactNode;
  /** Called when the worker clicks a target turn's message. */
  onTurnClick?: (index: number) => void;
}

/**
 * A dialogue as a list of turns. Every text from the data (turns, persona) is rendered as React
 * text, never as HTML.
 */
export function DialogueView({
  dialogueKey,
  turns,
  persona,
  names,
  show,
  title,
  side,
  targets,
  current,
  renderAnswers,
  onTurnClick,
}: Props) {
  const personaLines = (persona ?? []).filter((p) => typeof p === 'string' && p.trim());
  return (
    <section
      className="dialogue"
      data-dialogue-key={dialogueKey}
      data-side={side}
      aria-label={title ?? 'Dialogue'}
    >
      {title && <h3 className="dialogue-title">{title}</h3>}
      {personaLines.length > 0 && (
        <div className="persona">
          <h4>{`${names.system}'s persona`}</h4>
          <ul>
            {personaLines.map((line, i) => (
              <li key={i}>{show(line)}</li>
            ))}
          </ul>
        </div>
      )}
      <ol className="turns">
        {turns.map((turn, i) => {
          const isTarget = targets?.has(turn.index) ?? false;
          const isCurrent = isTarget && current === turn.index;
          const classes = ['turn', `speaker-${turn.speaker === 'system' ? 'system' : 'user'}`];
          if (isTarget) classes.push('is-target');
          if (isCurrent) classes.push('is-current');
          const clickable = isTarget && !isCurrent && onTurnClick;
          return (
            <li key={`${turn.index}-${i}`} className={classes.join(' ')}>
              <div
                className={clickable ? 'bubble is-clickable' : 'bubble'}
                onClick={clickable ? () => onTurnClick(turn.index) : undefined}
              >
                <div className="turn-head">
                  <span className="speaker">{speakerLabel(turn.speaker, names)}</span>
                  <span className="turn-number">
                    Turn {turnNumber(turn.index)}
                    {isTarget && <span className="target-tag"> · to annotate</span>}
                  </span>
                </div>
                <p className="text">{show(String(turn.text ?? ''))}</p>
              </div>
              {isTarget && renderAnswers?.(turn)}
            </li>
          );
        })}
      </ol>
    </section>
  );
}
