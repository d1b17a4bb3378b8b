import { DialogueView } from '../components/DialogueView';
import { humanize, showFor, speakerNames, turnNumber, type Show } from '../display';
import type { Bucket, Dialogue, Turn } from '../types';
import { AnswerValue } from './AnswerValue';
import { label } from './format';
import type { ConversationLog, UnitDetail } from './types';

export type BucketAnswers = Record<string, Record<string, unknown>>;

export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function bucketTitle(name: string, buckets: Record<string, Bucket>): string {
  return humanize(buckets[name]?.task_title || name);
}

/** A multiselect's stored values as the labels the worker ticked; other answers as stored. */
function readable(value: unknown, bucket: Bucket | undefined): unknown {
  if (bucket?.config !== 'multiselect' || !Array.isArray(value) || !Array.isArray(bucket.options)) return value;
  const labels = new Map<string, string>();
  for (const o of bucket.options as Array<{ value?: unknown; label?: unknown }>) {
    if (typeof o?.value === 'string' && typeof o.label === 'string') labels.set(o.value, o.label);
  }
  return value.map((v) => (typeof v === 'string' ? (labels.get(v) ?? v) : v));
}

/**
 * The submission as the worker saw it, read-only: each dialogue with its turns (the worker
 * page's own dialogue view) and the worker's answers under the turns they belong to; chats as
 * transcripts with the labels per message. All data is rendered as text.
 */
export function SubmissionView({ unit }: { unit: UnitDetail }) {
  const payload = unit.payload ?? {};
  const dialogues = payload.dialogues ?? [];
  const buckets = payload.buckets ?? {};
  const answers = isObject(unit.answers) ? unit.answers : {};
  const shown = new Set(dialogues.map((d) => d.key));
  const arena = payload.kind === 'arena';
  const chat = unit.conversations.length > 0;
  // a chat's or a battle's stored record is shown by its transcripts and AnswersAbout
  const others = arena || chat ? [] : Object.entries(answers).filter(([key]) => !shown.has(key));
  const names = speakerNames(payload.speaker_names);

  return (
    <div className="submission">
      {arena ? (
        <ArenaBattle unit={unit} />
      ) : (
        <>
          {unit.conversations.map((c) => (
            <Transcript key={c.conversation_id} conversation={c} />
          ))}
          <AnswersAbout unit={unit} about={(key) => chatAbout(key, unit.conversations)} />
        </>
      )}
      {dialogues.map((d, i) => (
        <StaticDialogue
          key={d.key}
          number={i + 1}
          dataId={unit.dialogue_ids?.[d.key] ?? null}
          dialogue={d}
          buckets={buckets}
          names={names}
          answers={isObject(answers[d.key]) ? (answers[d.key] as BucketAnswers) : {}}
        />
      ))}
      {others.map(([key, value]) => (
        <section key={key} className="panel" aria-label={`Answers for ${key}`}>
          <h3>Answers for {key}</h3>
          <BucketList answers={isObject(value) ? (value as BucketAnswers) : {}} buckets={buckets} />
        </section>
      ))}
      {dialogues.length === 0 && unit.conversations.length === 0 && others.length === 0 && (
        <p className="muted">This submission has no dialogue or answers to show.</p>
      )}
    </div>
  );
}

interface DialogueProps {
  number: number;
  /** The data's `dialogue_id`, shown instead of the opaque key. */
  dataId: string | null;
  dialogue: Dialogue;
  buckets: Record<string, Bucket>;
  names: ReturnType<typeof speakerNames>;
  answers: BucketAnswers;
}

function StaticDialogue({ number, dataId, dialogue, buckets, names, answers }: DialogueProps) {
  const show = showFor(names, null);
  const targets = new Set<number>();
  for (const name of dialogue.annotation_tasks ?? []) {
    for (const i of buckets[name]?.targets?.[dialogue.key] ?? []) targets.add(i);
  }
  for (const perTarget of Object.values(answers)) {
    if (!isObject(perTarget)) continue;
    for (const t of Object.keys(perTarget)) if (/^\d+$/.test(t)) targets.add(Number(t));
  }
  const turnAnswers = (turn: Turn) => {
    const rows = Object.entries(answers).filter(([, perTarget]) => isObject(perTarget) && String(turn.index) in perTarget);
    return (
      <div className="answers read-only" role="group" aria-label={`Answers for turn ${turnNumber(turn.index)}`}>
        {rows.length === 0 ? (
          <p className="muted small">No answer for this turn.</p>
        ) : (
          <dl className="answer-dl">
            {rows.map(([name, perTarget]) => (
              <div key={name}>
                <dt>{bucketTitle(name, buckets)}</dt>
                <dd>
                  <AnswerValue value={readable(perTarget[String(turn.index)], buckets[name])} show={showFor(names, turn.speaker)} />
                </dd>
              </div>
            ))}
          </dl>
        )}
      </div>
    );
  };
  const dialogueLevel: BucketAnswers = {};
  for (const [name, perTarget] of Object.entries(answers)) {
    if (!isObject(perTarget)) continue;
    const rest = Object.fromEntries(Object.entries(perTarget).filter(([t]) => !/^\d+$/.test(t)));
    if (Object.keys(rest).length) dialogueLevel[name] = rest;
  }
  const title = `Dialogue ${number}`;
  return (
    <section className="panel submission-dialogue" aria-labelledby={`sd-${dialogue.key}`}>
      <h3 id={`sd-${dialogue.key}`}>
        {title} <span className="muted small mono">{dataId ?? dialogue.key}</span>
      </h3>
      <p className="muted small">Tasks: {(dialogue.annotation_tasks ?? []).map((n) => bucketTitle(n, buckets)).join(', ') || '–'}</p>
      {dialogue.turns2 ? (
        <div className="compare">
          <DialogueView dialogueKey={dialogue.key} turns={dialogue.turns} persona={dialogue.persona} names={names} show={show} title="Dialogue 1" side={1} />
          <DialogueView dialogueKey={`${dialogue.key}-2`} turns={dialogue.turns2} names={names} show={show} title="Dialogue 2" side={2} />
        </div>
      ) : (
        <DialogueView
          dialogueKey={dialogue.key}
          turns={dialogue.turns}
          persona={dialogue.persona}
          names={names}
          show={show}
          targets={targets}
          renderAnswers={turnAnswers}
        />
      )}
      {Object.keys(dialogueLevel).length > 0 && (
        <div className="dialogue-answers">
          <h4>Answers about the whole dialogue</h4>
          <BucketList answers={dialogueLevel} buckets={buckets} show={show} />
        </div>
      )}
      {dialogue.turns2 &&
        Object.entries(answers).some(([, v]) => isObject(v) && Object.keys(v).some((t) => /^\d+$/.test(t))) && (
          <div className="dialogue-answers">
            <h4>Answers per turn</h4>
            <BucketList answers={answers} buckets={buckets} show={show} />
          </div>
        )}
    </section>
  );
}

/** bucket → target → value, as a definition list. */
export function BucketList({ answers, buckets, show }: { answers: BucketAnswers; buckets: Record<string, Bucket>; show?: Show }) {
  return (
    <dl className="answer-dl">
      {Object.entries(answers).flatMap(([name, perTarget]) =>
        Object.entries(isObject(perTarget) ? perTarget : { '': perTarget }).map(([target, value]) => (
          <div key={`${name}/${target}`}>
            <dt>
              {bucketTitle(name, buckets)}
              {/^\d+$/.test(target) ? ` · Turn ${turnNumber(Number(target))}` : ''}
            </dt>
            <dd>
              <AnswerValue value={readable(value, buckets[name])} show={show} />
            </dd>
          </div>
        )),
      )}
    </dl>
  );
}

function Transcript({ conversation: c, title }: { conversation: ConversationLog; title?: string }) {
  const heading = title ?? `Chat ${c.position + 1} with ${c.bot}`;
  return (
    <section className="panel transcript" aria-label={heading}>
      <h3>
        {heading} <span className="muted small">({label(c.status)})</span>
      </h3>
      {c.messages.length === 0 ? (
        <p className="muted">No messages.</p>
      ) : (
        <ol className="chat-messages">
          {c.messages.map((m) => (
            <li key={m.index} className={m.role === 'bot' ? 'chat-message is-bot' : 'chat-message is-worker'}>
              <span className="chat-speaker">
                {m.role === 'bot' ? c.bot : 'Worker'} · message {m.index + 1}
              </span>
              <span className="text">{m.text}</span>
              {m.labels && Object.keys(m.labels).length > 0 && (
                <dl className="answer-dl chat-label-done">
                  {Object.entries(m.labels).map(([name, value]) => (
                    <div key={name}>
                      <dt>{humanize(name)}</dt>
                      <dd>
                        <AnswerValue value={value} />
                      </dd>
                    </div>
                  ))}
                </dl>
              )}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

const SIDES = ['Model A', 'Model B'];

/** A chat's or a battle's answers in its stored record (`{dialogues, answers}`), by key. */
function storedAnswers(unit: UnitDetail): Record<string, unknown> {
  return isObject(unit.answers) && isObject(unit.answers.answers) ? unit.answers.answers : {};
}
// The stored keys of a battle's offline answers (docs/arena.md): each side's conversation, and a comparison of both.
const ABOUT: Record<string, string> = { c0: 'Model A', c1: 'Model B', c0_c1: 'Model A and Model B' };
const WINNERS: Record<string, string> = { a: 'Model A', b: 'Model B', tie: 'tie', bothbad: 'both bad' };

/**
 * An arena battle under review: both transcripts side by side (with the labels of the replies),
 * the votes naming the bots, and the answers about each side after the battle.
 */
export function ArenaBattle({ unit }: { unit: UnitDetail }) {
  const stored = storedAnswers(unit);
  const battle = isObject(stored.battle) ? stored.battle : {};
  const votes = isObject(battle.vote) ? Object.entries(battle.vote) : [];
  return (
    <>
      <div className="compare">
        {unit.conversations.map((c) => (
          <Transcript key={c.conversation_id} conversation={c} title={`${SIDES[c.position] ?? 'Side'}: ${c.bot}`} />
        ))}
      </div>
      <section className="panel" aria-labelledby="battle-votes">
        <h3 id="battle-votes">Votes</h3>
        {votes.length === 0 ? (
          <p className="muted">No vote stored.</p>
        ) : (
          <ul>
            {votes.map(([turn, vote]) => {
              const v = isObject(vote) ? vote : {};
              const choice = typeof v.choice === 'string' ? (WINNERS[v.choice] ?? v.choice) : '?';
              return (
                <li key={turn}>
                  After message {turn}: {choice}
                  {typeof v.bot === 'string' ? ` (${v.bot})` : ''}
                </li>
              );
            })}
          </ul>
        )}
      </section>
      <AnswersAbout unit={unit} about={(key) => ABOUT[key] ?? null} />
    </>
  );
}

/** What a chat's stored key (`c0`, `c1`, `c0_c1`: docs/chat.md) is about, with its bots. */
function chatAbout(key: string, conversations: ConversationLog[]): string | null {
  const chat = (position: number) => {
    const c = conversations.find((x) => x.position === position);
    return c ? `chat ${position + 1} with ${c.bot}` : null;
  };
  const one = /^c(\d+)$/.exec(key);
  if (one) return chat(Number(one[1]));
  const two = /^c(\d+)_c(\d+)$/.exec(key);
  const [first, second] = two ? [chat(Number(two[1])), chat(Number(two[2]))] : [null, null];
  return first && second ? `${first} and ${second}` : null;
}

/**
 * The answers a chat's or a battle's worker gave after the conversations, one panel per
 * conversation (or comparison) that `about` names; the online labels show under their replies.
 */
function AnswersAbout({ unit, about }: { unit: UnitDetail; about: (key: string) => string | null }) {
  const stored = storedAnswers(unit);
  const buckets = unit.payload?.buckets ?? {};
  const labels = new Set(unit.conversations.flatMap((c) => c.messages.flatMap((m) => Object.keys(m.labels ?? {}))));
  const panels = Object.entries(stored).flatMap(([key, value]) => {
    const title = about(key);
    if (title === null || !isObject(value)) return [];
    const answers = Object.fromEntries(Object.entries(value as BucketAnswers).filter(([name]) => !labels.has(name)));
    return Object.keys(answers).length > 0 ? [[key, title, answers] as const] : [];
  });
  return (
    <>
      {panels.map(([key, title, answers]) => (
        <section key={key} className="panel" aria-label={`Answers about ${title}`}>
          <h3>Answers about {title}</h3>
          <BucketList answers={answers} buckets={buckets} />
        </section>
      ))}
    </>
  );
}
