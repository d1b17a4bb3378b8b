/**
 * An arena unit (docs/arena.md): the worker's message goes to two anonymous models at once,
 * both replies stream side by side ("Model A", "Model B"; stacked on a phone), and the worker
 * votes on them. With the chat kind's annotations, each reply is labelled under it (sent with
 * the next message or the vote) and the offline questions about each side follow the last vote.
 * The server keeps the state; this page shows it, follows the event stream (the events'
 * `position` names the pane) and sends the worker's actions.
 */
import { useEffect, useLayoutEffect, useMemo, useReducer, useRef, useState, type ReactNode } from 'react';
import {
  ApiError,
  NetworkError,
  messageOf,
  newClientId,
  retryArenaSide,
  sendArenaMessage,
  startChat,
  voteArena,
  type SideLabels,
} from '../api';
import type { Step } from '../answers';
import { canWrite, chatReducer, newSession, type OutgoingMessage } from '../chat';
import { endedEntries } from '../chatAnnotations';
import { ChatComposer } from '../components/ChatComposer';
import { ChatLog } from '../components/ChatLog';
import { ChatProblem } from '../components/ChatProblem';
import { Countdown, useSecondsUntil } from '../components/Countdown';
import { OfflineAnnotation } from '../components/OfflineAnnotation';
import { useReplyLabels, type ReplyLabels } from '../components/ReplyLabels';
import { BriefingButton } from '../components/TaskBriefing';
import type { ArenaVote, ChatState, Conversation, ScreeningOutcome, Unit } from '../types';
import { useChatAnnotations } from '../useChatAnnotations';
import { useChatSubmit } from '../useChatSubmit';
import { useOnlineLabelling, type SentLabel } from '../useOnlineLabelling';
import { usePerform } from '../usePerform';
import { useChatEvents, type ReconnectDelays } from '../useChatEvents';

interface Props {
  unit: Unit;
  chat: ChatState;
  token: string;
  /** `screening`: the outcome of a screening battle's submit. */
  onCompleted: (completionCode: string | null, screening?: ScreeningOutcome) => void;
  onRefused: (error: ApiError) => void;
  reconnectDelays?: ReconnectDelays;
  draftDebounceMs?: number;
}

/** One side: its log with the replies' labels, whether its model is typing, and its error with "Try again". */
function Pane({
  conversation,
  outgoing,
  busy,
  onRetry,
  labels,
}: {
  conversation: Conversation;
  outgoing: OutgoingMessage[];
  busy: boolean;
  onRetry: () => void;
  labels: ReplyLabels;
}) {
  const { partner, reply, error, status } = conversation;
  return (
    <section className="arena-pane chat">
      <h2 className="arena-pane-title">{partner}</h2>
      <ChatLog conversation={conversation} outgoing={outgoing} label={partner} renderLabel={labels.renderLabel} />
      <p className="chat-typing" role="status">
        {status === 'active' && reply !== null && reply.text === '' ? `${partner} is typing…` : ''}
      </p>
      {status === 'active' && error && (
        <div className="chat-alert" role="alert">
          <p>
            {partner}: {error.message}
          </p>
          {error.retry && (
            <button type="button" className="btn btn-small" onClick={onRetry} disabled={busy}>
              Try again
            </button>
          )}
        </div>
      )}
      {labels.dialog}
    </section>
  );
}

/** The vote on the replies shown: one button per option, in the conf's words (held while a required label is missing). */
function VotePanel({
  arena,
  turn,
  busy,
  blockedBy,
  onVote,
}: {
  arena: ArenaVote;
  turn: number;
  busy: boolean;
  /** The ids of the hints of the labels still missing, if any. */
  blockedBy: string | undefined;
  onVote: (choice: string) => void;
}) {
  const heading = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => heading.current?.focus(), [turn]);
  return (
    <section className="arena-vote panel" aria-labelledby="arena-vote-question">
      <h2 id="arena-vote-question" ref={heading} tabIndex={-1}>
        {arena.question}
      </h2>
      <div className="arena-vote-options">
        {arena.options.map((o) => (
          <button key={o.value} type="button" className="btn" disabled={busy || blockedBy !== undefined} aria-describedby={blockedBy} onClick={() => onVote(o.value)}>
            {o.label}
          </button>
        ))}
      </div>
    </section>
  );
}

/**
 * The offline steps about one side call its model by the pane's name ("Model A"), not
 * "Partner"; steps about both sides (a comparison) keep the unit's names.
 */
function bySide(chat: ChatState, shown: { unit: Unit; steps: Step[] }): { unit: Unit; steps: Step[] } {
  const offline = (chat.annotations?.offline ?? []).flatMap((e) => e.dialogues);
  const about = new Set(shown.unit.dialogues.map((d) => offline.find((o) => o.key === d.key)?.conversation ?? null));
  const [position] = about;
  const partner = about.size === 1 ? chat.conversations.find((c) => c.position === position)?.partner : undefined;
  return partner ? { ...shown, unit: { ...shown.unit, speaker_names: { ...shown.unit.speaker_names, system: partner } } } : shown;
}

/**
 * The turn the worker votes on now, as the server decides it (`arena.vote_due`), followed here
 * from the stream's events between its `state` events: both replies are in and this turn has
 * no vote yet (with `vote: end`, only after the last message).
 */
export function voteDue(chat: ChatState): number | null {
  const arena = chat.arena;
  const sides = chat.conversations;
  if (!arena || arena.finished || sides.length !== 2) return null;
  if (!sides.every((c) => c.status === 'active' && c.reply === null && c.error === null)) return null;
  const turn = sides[0].turns_done;
  if (turn < 1 || arena.votes.some((v) => v.turn === turn)) return null;
  return arena.vote === 'end' && turn < chat.num_turns ? null : turn;
}

export function ArenaUnit({ unit, chat: loaded, token, onCompleted, onRefused, reconnectDelays, draftDebounceMs }: Props) {
  const unitId = unit.unit_id;
  const [{ chat, outgoing }, dispatch] = useReducer(chatReducer, loaded, newSession);
  const arena = chat.arena;
  const [a, b] = chat.conversations;
  const stopped = chat.conversations.some((c) => c.status === 'timed_out' || c.status === 'failed');
  const finished = arena?.finished === true;
  const connection = useChatEvents({
    unitId,
    token,
    enabled: !stopped && !finished,
    onEvent: (event) => dispatch({ type: 'event', event }),
    onRefused,
    delays: reconnectDelays,
  });
  const { busy, problem, setProblem, perform } = usePerform();
  const [submitting, setSubmitting] = useState(false);
  const ann = useChatAnnotations({ unit, chat, token, enabled: !stopped && !submitting, draftDebounceMs });
  const { labelFor, refused, clearRefusal, labellingOf } = useOnlineLabelling(unit, chat, ann);
  const paneLabels = [useReplyLabels(a, labellingOf(a)), useReplyLabels(b, labellingOf(b))];
  const blocking = paneLabels.filter((l) => l.blocked).map((l) => l.hintId);
  const blockedBy = blocking.length > 0 ? blocking.join(' ') : undefined;

  /** The labels of both sides' latest replies, as the next message or the vote carries them. */
  const sideLabels = (): { labels: SideLabels; sent: [number, SentLabel][] } => {
    const labels: SideLabels = {};
    const sent: [number, SentLabel][] = [];
    for (const c of chat.conversations) {
      const label = labelFor(c);
      if (label === null) continue;
      sent.push([c.position, label]);
      if (label.value !== undefined) labels[c.position] = label.value;
    }
    return { labels, sent };
  };
  /** A refused label is shown under the label of the side the server names. */
  const refusedSide = (e: unknown, sent: [number, SentLabel][]): boolean => {
    const named = chat.conversations.find((c) => e instanceof Error && e.message.includes(`${c.partner}'s message`));
    return refused(e, sent.length > 0, named?.position ?? null);
  };
  const labelsSent = (sent: [number, SentLabel][]) => {
    for (const [position, label] of sent) ann.dropLabel(position, label.index);
  };

  const replaceChat = (next: ChatState) => dispatch({ type: 'event', event: { type: 'state', chat: next } });
  const start = () => perform(async () => replaceChat(await startChat(unitId, token)), 'The battle could not be started');
  const vote = (choice: string) =>
    perform(async () => {
      const { labels, sent } = sideLabels();
      clearRefusal();
      try {
        replaceChat(await voteArena(unitId, token, choice, labels));
      } catch (e) {
        if (refusedSide(e, sent)) return;
        throw e;
      }
      labelsSent(sent);
    }, 'Your vote was not stored');
  const retry = (position: number) =>
    perform(async () => {
      await retryArenaSide(unitId, token, position);
      dispatch({ type: 'retrying', position });
    }, 'The model could not be asked again');

  /** Shown in both panes at once, with the labels of the replies before it; a network error is retried once with the same id. */
  const send = async (text: string): Promise<boolean> => {
    const clientId = newClientId();
    const { labels, sent: labelled } = sideLabels();
    const sides = chat.conversations.map((c) => `${clientId}:${c.position}`);
    chat.conversations.forEach((c, i) => dispatch({ type: 'sending', message: { clientId: sides[i], position: c.position, text, index: null } }));
    setProblem(null);
    clearRefusal();
    try {
      let sent;
      try {
        sent = await sendArenaMessage(unitId, token, text, clientId, labels);
      } catch (e) {
        if (!(e instanceof NetworkError)) throw e;
        sent = await sendArenaMessage(unitId, token, text, clientId, labels);
      }
      for (const side of sides) dispatch({ type: 'sent', clientId: side, index: sent.index });
      for (const [position, label] of labelled) {
        if (label.value !== undefined) dispatch({ type: 'labelled', position, index: label.index, labels: label.value });
      }
      labelsSent(labelled);
      return true;
    } catch (e) {
      for (const side of sides) dispatch({ type: 'not-sent', clientId: side });
      if (!refusedSide(e, labelled)) setProblem(`Your message was not sent: ${messageOf(e)}`);
      return false;
    }
  };

  const autoStarted = useRef(false);
  const pending = chat.conversations.some((c) => c.status === 'pending');
  useEffect(() => {
    if (!pending || autoStarted.current) return;
    autoStarted.current = true;
    void start();
  });

  const revealed = arena?.models ?? null;
  // The offline questions about each side come after the last vote, before the bots are named.
  const asking = finished && ann.shown !== null;
  const offline = useMemo(() => ann.shown && bySide(chat, ann.shown), [ann.shown]);
  const { submitError, submitUnit } = useChatSubmit({
    unitId,
    token,
    chat,
    ann,
    setSubmitting,
    ready: finished && !revealed && !asking,
    onCompleted,
  });

  const turnsDone = a?.turns_done ?? 0;
  const due = voteDue(chat);
  const writable =
    !finished &&
    due === null &&
    turnsDone < chat.num_turns &&
    chat.conversations.every((c) => canWrite(c, outgoing));
  const title = unit.task?.title || 'Compare two models';
  const briefing = <BriefingButton unit={unit} bucketNames={Object.keys(unit.buckets ?? {})} />;
  const deadline = a?.status === 'active' && a.respond_by ? Date.parse(a.respond_by) : NaN;
  const seconds = useSecondsUntil(Number.isFinite(deadline) && !finished ? deadline : null);

  let footer: ReactNode = null;
  if (stopped) {
    footer = (
      <div className="chat-alert" role="alert">
        <p>
          <strong>This battle has stopped</strong> (the time to answer ran out, or a model had a technical problem). The
          task went back to the pool; please open your task link again to get new work.
        </p>
      </div>
    );
  } else if (finished) {
    footer = (
      <section className="arena-vote panel">
        <h2>Thank you for your vote</h2>
        {revealed && (
          <p>
            Model A was <strong>{revealed.A}</strong>; Model B was <strong>{revealed.B}</strong>.
          </p>
        )}
        <p role="status">{revealed || submitError ? '' : 'Submitting…'}</p>
        <ChatProblem text={submitError && `Your battle could not be submitted: ${submitError.message}`} />
        {(revealed || submitError) && (
          <button type="button" className="btn btn-primary" onClick={() => void submitUnit()}>
            {submitError ? 'Try again' : 'Finish'}
          </button>
        )}
      </section>
    );
  } else if (arena && due !== null) {
    footer = <VotePanel arena={arena} turn={due} busy={busy} blockedBy={blockedBy} onVote={(choice) => void vote(choice)} />;
  } else if (a && b && a.status === 'active') {
    footer = (
      <ChatComposer enabled={writable} maxChars={chat.max_message_chars} blocked={blockedBy !== undefined} describedBy={blockedBy} onSend={send} />
    );
  }

  if (asking && offline) {
    const entries = endedEntries(chat);
    const last = offline.unit.dialogues.some((d) => entries[entries.length - 1]?.dialogues.some((e) => e.key === d.key));
    return (
      <OfflineAnnotation
        title={title}
        chat={chat}
        shown={offline}
        answers={ann.answers}
        update={ann.update}
        stepIndex={ann.stepIndex}
        onStep={ann.goToStep}
        onFinish={ann.reviewing ? () => void submitUnit() : ann.finish}
        finishLabel={ann.reviewing || (last && !revealed) ? 'Submit' : 'Continue'}
        submitting={submitting}
        submitError={ann.reviewing ? submitError : null}
        saver={ann.saver}
        instructions={briefing}
      />
    );
  }

  return (
    <div className="app chat-app arena-app">
      <header className="topbar chat-topbar">
        <div className="chat-titles">
          <h1 className="task-title">{title}</h1>
          <p className="chat-partner">Two anonymous models answer each of your messages.</p>
        </div>
        <div className="topbar-status">
          {briefing}
          <span className="chat-turns">
            Message {Math.min(turnsDone + (writable ? 1 : 0), chat.num_turns)} of {chat.num_turns}
          </span>
          {seconds !== null && <Countdown seconds={seconds} label="Time to reply" />}
        </div>
      </header>
      <p className="chat-connection" role="status">
        {!stopped && !finished && connection === 'lost' ? 'Connection lost — reconnecting…' : ''}
      </p>
      <main className="chat-main arena-main" id="main">
        <div className="arena-panes">
          {chat.conversations.map((c) => (
            <Pane
              key={c.position}
              conversation={c}
              outgoing={outgoing.filter((o) => o.position === c.position)}
              busy={busy}
              onRetry={() => void retry(c.position)}
              labels={paneLabels[c.position]}
            />
          ))}
        </div>
        {paneLabels[0].hint}
        {paneLabels[1].hint}
        <ChatProblem text={problem} />
        {footer}
      </main>
    </div>
  );
}
