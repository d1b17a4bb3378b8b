/**
 * An arena unit (docs/arena.md): the worker's message goes to two anonymous models at once,
 * both replies stream side by side ("Model A", "Model B"; stacked on a phone), and the worker
 * votes on them. The server keeps the state; this page shows it, follows the event stream
 * (the events' `position` names the pane) and sends the worker's actions.
 */
import { useCallback, useEffect, useReducer, useRef, useState, type ReactNode } from 'react';
import { ApiError, NetworkError, messageOf, newClientId, retryArenaSide, sendChatMessage, startChat, submit, voteArena } from '../api';
import { canWrite, chatReducer, newSession, type OutgoingMessage } from '../chat';
import { ChatComposer } from '../components/ChatComposer';
import { ChatLog } from '../components/ChatLog';
import { Countdown, useSecondsUntil } from '../components/Countdown';
import { followCompletion } from '../platform';
import { submitTimings } from '../timings';
import type { ArenaVote, ChatState, Conversation, ScreeningOutcome, Unit } from '../types';
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
}

function Problem({ text }: { text: string | null }) {
  return text ? (
    <p className="chat-alert" role="alert">
      {text}
    </p>
  ) : null;
}

/** One side: its log, whether its model is typing, and its error with "Try again". */
function Pane({ conversation, outgoing, busy, onRetry }: { conversation: Conversation; outgoing: OutgoingMessage[]; busy: boolean; onRetry: () => void }) {
  const { partner, reply, error, status } = conversation;
  return (
    <section className="arena-pane chat">
      <h2 className="arena-pane-title">{partner}</h2>
      <ChatLog conversation={conversation} outgoing={outgoing} label={partner} />
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
    </section>
  );
}

/** The vote on the replies shown: one button per option, in the conf's words. */
function VotePanel({ arena, turn, busy, onVote }: { arena: ArenaVote; turn: number; busy: boolean; onVote: (choice: string) => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [turn]);
  return (
    <section className="arena-vote panel" aria-labelledby="arena-vote-question">
      <h2 id="arena-vote-question" ref={heading} tabIndex={-1}>
        {arena.question}
      </h2>
      <div className="arena-vote-options">
        {arena.options.map((o) => (
          <button key={o.value} type="button" className="btn" disabled={busy} onClick={() => onVote(o.value)}>
            {o.label}
          </button>
        ))}
      </div>
    </section>
  );
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

export function ArenaUnit({ unit, chat: loaded, token, onCompleted, onRefused, reconnectDelays }: Props) {
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
  const replaceChat = (next: ChatState) => dispatch({ type: 'event', event: { type: 'state', chat: next } });
  const start = () => perform(async () => replaceChat(await startChat(unitId, token)), 'The battle could not be started');
  const vote = (choice: string) => perform(async () => replaceChat(await voteArena(unitId, token, choice)), 'Your vote was not stored');
  const retry = (position: number) =>
    perform(async () => {
      await retryArenaSide(unitId, token, position);
      dispatch({ type: 'retrying', position });
    }, 'The model could not be asked again');

  /** Shown in both panes at once; a network error is retried once with the same id. */
  const send = async (text: string): Promise<boolean> => {
    const clientId = newClientId();
    const sides = chat.conversations.map((c) => `${clientId}:${c.position}`);
    chat.conversations.forEach((c, i) => dispatch({ type: 'sending', message: { clientId: sides[i], position: c.position, text, index: null } }));
    setProblem(null);
    try {
      let sent;
      try {
        sent = await sendChatMessage(unitId, token, text, clientId);
      } catch (e) {
        if (!(e instanceof NetworkError)) throw e;
        sent = await sendChatMessage(unitId, token, text, clientId);
      }
      for (const side of sides) dispatch({ type: 'sent', clientId: side, index: sent.index });
      return true;
    } catch (e) {
      for (const side of sides) dispatch({ type: 'not-sent', clientId: side });
      setProblem(`Your message was not sent: ${messageOf(e)}`);
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

  const [submitError, setSubmitError] = useState<string | null>(null);
  const submitted = useRef(false);
  const loadedAt = useRef(new Date());
  const submitId = useRef(newClientId());
  const submitUnit = useCallback(async () => {
    setSubmitError(null);
    try {
      const result = await submit(unitId, token, {}, submitTimings(loadedAt.current, new Date(), []), submitId.current);
      onCompleted(result?.completion_code ?? null, result?.screening);
      followCompletion(result);
    } catch (e) {
      setSubmitError(messageOf(e));
    }
  }, [unitId, token, onCompleted]);
  const revealed = arena?.models ?? null;
  useEffect(() => {
    if (!finished || revealed || submitted.current) return;
    submitted.current = true;
    void submitUnit();
  }, [finished, revealed, submitUnit]);

  const turnsDone = a?.turns_done ?? 0;
  const due = voteDue(chat);
  const writable =
    !finished &&
    due === null &&
    turnsDone < chat.num_turns &&
    chat.conversations.every((c) => canWrite(c, outgoing));
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
        <Problem text={submitError && `Your battle could not be submitted: ${submitError}`} />
        {(revealed || submitError) && (
          <button type="button" className="btn btn-primary" onClick={() => void submitUnit()}>
            {submitError ? 'Try again' : 'Finish'}
          </button>
        )}
      </section>
    );
  } else if (arena && due !== null) {
    footer = <VotePanel arena={arena} turn={due} busy={busy} onVote={(choice) => void vote(choice)} />;
  } else if (a && b && a.status === 'active') {
    footer = <ChatComposer enabled={writable} maxChars={chat.max_message_chars} onSend={send} />;
  }

  return (
    <div className="app chat-app arena-app">
      <header className="topbar chat-topbar">
        <div className="chat-titles">
          <h1 className="task-title">{unit.task?.title || 'Compare two models'}</h1>
          <p className="chat-partner">Two anonymous models answer each of your messages.</p>
        </div>
        <div className="topbar-status">
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
            />
          ))}
        </div>
        <Problem text={problem} />
        {footer}
      </main>
    </div>
  );
}
