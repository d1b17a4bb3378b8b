/**
 * A chat unit (docs/chat-api.md): the worker chats live with one bot, or with two one after the
 * other. The server keeps the state; this page shows it, follows the event stream and sends the
 * worker's actions. When every conversation has ended, the unit is submitted.
 */
import { useCallback, useEffect, useReducer, useRef, useState, type ReactNode } from 'react';
import {
  ApiError,
  endChat,
  NetworkError,
  newClientId,
  retryChat,
  sendChatMessage,
  startChat,
  submit,
  type SentMessage,
} from '../api';
import { chatOutcome, chatReducer, newSession, shownConversation } from '../chat';
import { submitTimings } from '../timings';
import type { ChatState, Conversation, Unit } from '../types';
import { useChatEvents, type ReconnectDelays } from '../useChatEvents';
import { ChatConversation } from './ChatConversation';
import { Countdown, useSecondsUntil } from './Countdown';

interface Props {
  unit: Unit;
  /** The unit's `chat` object as loaded. */
  chat: ChatState;
  token: string;
  onCompleted: (completionCode: string | null) => void;
  /** The server refused the event stream (401, 404, 409): the page shows an error instead. */
  onRefused: (error: ApiError) => void;
  /** Test hook. */
  reconnectDelays?: ReconnectDelays;
}

function messageOf(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** "Chat 1 of 2: Partner A" in a paired unit, else "Chat with Partner". */
function conversationTitle(chat: ChatState, c: Conversation): string {
  const n = chat.conversations.length;
  const number = chat.conversations.indexOf(c) + 1;
  return n > 1 ? `Chat ${number} of ${n}: ${c.partner}` : `Chat with ${c.partner}`;
}

function ChatHeader({ title, chat, conversation }: { title: string; chat: ChatState; conversation: Conversation | null }) {
  const showsTimer = conversation?.status === 'active' && !conversation.can_end && conversation.respond_by !== null;
  const deadline = showsTimer && conversation.respond_by ? Date.parse(conversation.respond_by) : NaN;
  const seconds = useSecondsUntil(Number.isFinite(deadline) ? deadline : null);
  return (
    <header className="topbar chat-topbar">
      <div className="chat-titles">
        <h1 className="task-title">{title}</h1>
        {conversation && <h2 className="chat-partner">{conversationTitle(chat, conversation)}</h2>}
      </div>
      {conversation && (
        <div className="topbar-status">
          <span className="chat-turns">
            Turn {conversation.turns_done} of {chat.num_turns}
          </span>
          {seconds !== null && <Countdown seconds={seconds} label="Time to reply" />}
        </div>
      )}
    </header>
  );
}

/** A screen between the chats, or while the page starts or submits. */
function ChatNotice({ heading, children }: { heading: string; children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useEffect(() => ref.current?.focus(), []);
  return (
    <section className="chat-notice panel">
      <h2 ref={ref} tabIndex={-1}>
        {heading}
      </h2>
      {children}
    </section>
  );
}

function Problem({ text }: { text: string | null }) {
  return text ? (
    <p className="chat-alert" role="alert">
      {text}
    </p>
  ) : null;
}

export function ChatUnit({ unit, chat: loaded, token, onCompleted, onRefused, reconnectDelays }: Props) {
  const unitId = unit.unit_id;
  const [{ chat, outgoing }, dispatch] = useReducer(chatReducer, loaded, newSession);
  const outcome = chatOutcome(chat);
  const connection = useChatEvents({
    unitId,
    token,
    enabled: outcome === 'chatting',
    onEvent: (event) => dispatch({ type: 'event', event }),
    onRefused,
    delays: reconnectDelays,
  });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const current = chat.conversations.find((c) => c.position === chat.current) ?? null;
  const shown = shownConversation(chat);

  const perform = async (request: () => Promise<void>, failure: string) => {
    setBusy(true);
    setProblem(null);
    try {
      await request();
    } catch (e) {
      setProblem(`${failure}: ${messageOf(e)}`);
    } finally {
      setBusy(false);
    }
  };
  const replaceChat = (next: ChatState) => dispatch({ type: 'event', event: { type: 'state', chat: next } });
  const start = () => perform(async () => replaceChat(await startChat(unitId, token)), 'The chat could not be started');
  const end = () => perform(async () => replaceChat(await endChat(unitId, token)), 'The chat could not be ended');
  const retry = (position: number) =>
    perform(async () => {
      await retryChat(unitId, token);
      dispatch({ type: 'retrying', position });
    }, 'Your partner could not be asked again');

  /** Shown at once; a network error is retried once with the same id (never sent twice). */
  const send = async (position: number, text: string): Promise<boolean> => {
    const clientId = newClientId();
    dispatch({ type: 'sending', message: { clientId, position, text, index: null } });
    setProblem(null);
    try {
      let sent: SentMessage;
      try {
        sent = await sendChatMessage(unitId, token, text, clientId);
      } catch (e) {
        if (!(e instanceof NetworkError)) throw e;
        sent = await sendChatMessage(unitId, token, text, clientId);
      }
      dispatch({ type: 'sent', clientId, index: sent.index });
      return true;
    } catch (e) {
      dispatch({ type: 'not-sent', clientId });
      setProblem(`Your message was not sent: ${messageOf(e)}`);
      return false;
    }
  };

  // The first conversation starts by itself; later ones when the worker is ready.
  const autoStarted = useRef(false);
  const startsItself = current !== null && current.status === 'pending' && chat.conversations.indexOf(current) === 0;
  useEffect(() => {
    if (!startsItself || autoStarted.current) return;
    autoStarted.current = true;
    void start();
  });

  const [submitError, setSubmitError] = useState<string | null>(null);
  const submitId = useRef(newClientId());
  const loadedAt = useRef(new Date());
  const submitted = useRef(false);
  const submitUnit = useCallback(async () => {
    setSubmitError(null);
    try {
      const result = await submit(unitId, token, {}, submitTimings(loadedAt.current, new Date(), []), submitId.current);
      onCompleted(result?.completion_code ?? null);
    } catch (e) {
      setSubmitError(`Your chats could not be submitted: ${messageOf(e)}`);
    }
  }, [unitId, token, onCompleted]);
  useEffect(() => {
    if (outcome !== 'finished' || submitted.current) return;
    submitted.current = true;
    void submitUnit();
  }, [outcome, submitUnit]);

  let body: ReactNode;
  if (outcome === 'finished') {
    body = (
      <ChatNotice heading="All chats are done">
        <p role="status">{submitError ? '' : 'Submitting your chats…'}</p>
        <Problem text={submitError} />
        {submitError && (
          <button type="button" className="btn btn-primary" onClick={() => void submitUnit()}>
            Try again
          </button>
        )}
      </ChatNotice>
    );
  } else if (shown === null) {
    body = <Problem text="This chat could not be shown. Please reload the page." />;
  } else if (shown.status === 'pending' && startsItself) {
    body = (
      <ChatNotice heading={conversationTitle(chat, shown)}>
        <p role="status">{busy ? 'Starting the chat…' : ''}</p>
        <Problem text={problem} />
        {problem && (
          <button type="button" className="btn btn-primary" onClick={() => void start()} disabled={busy}>
            Try again
          </button>
        )}
      </ChatNotice>
    );
  } else if (shown.status === 'pending') {
    const done = chat.conversations.indexOf(shown);
    body = (
      <ChatNotice heading={`Chat ${done} of ${chat.conversations.length} is done.`}>
        <p>Next you will chat with {shown.partner}.</p>
        <Problem text={problem} />
        <button type="button" className="btn btn-primary" onClick={() => void start()} disabled={busy}>
          Start the next chat
        </button>
      </ChatNotice>
    );
  } else {
    body = (
      <ChatConversation
        chat={chat}
        conversation={shown}
        outgoing={outgoing.filter((o) => o.position === shown.position)}
        busy={busy}
        problem={problem}
        onSend={(text) => send(shown.position, text)}
        onEnd={() => void end()}
        onRetry={() => void retry(shown.position)}
      />
    );
  }

  const inConversation = shown !== null && shown.status !== 'pending' && outcome !== 'finished';
  return (
    <div className="app chat-app">
      <ChatHeader title={unit.task?.title || 'Chat task'} chat={chat} conversation={inConversation ? shown : null} />
      <p className="chat-connection" role="status">
        {outcome === 'chatting' && connection === 'lost' ? 'Connection lost — reconnecting…' : ''}
      </p>
      <main className="chat-main" id="main">
        {body}
      </main>
    </div>
  );
}
