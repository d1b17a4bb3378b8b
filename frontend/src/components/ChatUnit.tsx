/**
 * A chat unit (docs/chat-api.md): the worker chats live with one bot, or with two one after the
 * other. The server keeps the state; this page shows it, follows the event stream and sends the
 * worker's actions. Units with annotations label bot messages while chatting and annotate each
 * conversation after it ends. When every conversation has ended and been annotated, the unit is
 * submitted.
 */
import { useLayoutEffect, useReducer, useRef, useState, type ReactNode } from 'react';
import {
  ApiError,
  endChat,
  messageOf,
  NetworkError,
  newClientId,
  retryChat,
  sendChatMessage,
  startChat,
  type SentMessage,
} from '../api';
import { chatOutcome, chatReducer, newSession, shownConversation } from '../chat';
import { bucketLabel } from '../dashboard/format';
import type { ChatState, Conversation, Unit } from '../types';
import { useChatAnnotations } from '../useChatAnnotations';
import { useChatSubmit } from '../useChatSubmit';
import { useOnlineLabelling } from '../useOnlineLabelling';
import { usePerform } from '../usePerform';
import { useChatEvents, type ReconnectDelays } from '../useChatEvents';
import { ChatConversation } from './ChatConversation';
import { ChatProblem } from './ChatProblem';
import { Countdown, useSecondsUntil } from './Countdown';
import { OfflineAnnotation } from './OfflineAnnotation';
import { BriefingButton, TaskBriefing } from './TaskBriefing';

interface Props {
  unit: Unit;
  /** The unit's `chat` object as loaded. */
  chat: ChatState;
  token: string;
  onCompleted: (completionCode: string | null) => void;
  /** The server refused the event stream (401, 404, 409): the page shows an error instead. */
  onRefused: (error: ApiError) => void;
  /** Test hooks. */
  reconnectDelays?: ReconnectDelays;
  draftDebounceMs?: number;
  advanceDelayMs?: number;
}

/** "Chat 1 of 2: Partner A" in a paired unit, else "Chat with Partner". */
function conversationTitle(chat: ChatState, c: Conversation): string {
  const n = chat.conversations.length;
  const number = chat.conversations.indexOf(c) + 1;
  return n > 1 ? `Chat ${number} of ${n}: ${c.partner}` : `Chat with ${c.partner}`;
}

function ChatHeader({
  title,
  chat,
  conversation,
  instructions,
}: {
  title: string;
  chat: ChatState;
  conversation: Conversation | null;
  /** The "Task instructions" button. */
  instructions: ReactNode;
}) {
  const showsTimer = conversation?.status === 'active' && !conversation.can_end && conversation.respond_by !== null;
  const deadline = showsTimer && conversation.respond_by ? Date.parse(conversation.respond_by) : NaN;
  const seconds = useSecondsUntil(Number.isFinite(deadline) ? deadline : null);
  return (
    <header className="topbar chat-topbar">
      <div className="chat-titles">
        <h1 className="task-title">{title}</h1>
        {conversation && <h2 className="chat-partner">{conversationTitle(chat, conversation)}</h2>}
      </div>
      <div className="topbar-status">
        {instructions}
        {conversation && (
          <span className="chat-turns">
            Turn {conversation.turns_done} of {chat.num_turns}
          </span>
        )}
        {seconds !== null && <Countdown seconds={seconds} label="Time to reply" />}
      </div>
    </header>
  );
}

/** What the worker is about to do, in the words of the chat's settings. */
export function chatFacts(chat: ChatState): string[] {
  const n = chat.conversations.length;
  const turns = chat.num_turns === 1 ? '1 message' : `${chat.num_turns} messages`;
  const facts = [
    n > 1
      ? `You will chat with ${n} partners, one after the other, and write ${turns} to each.`
      : `You will chat with a partner and write ${turns}.`,
    'Your partner is a chatbot: a computer program writes its replies.',
  ];
  if (chat.max_resp_time > 0) facts.push(`You have ${bucketLabel(chat.max_resp_time)} to write each message.`);
  const online = chat.annotations?.online;
  if (online) {
    facts.push(
      online.required
        ? "You rate each of your partner's messages before you write your next one."
        : "You can rate each of your partner's messages as you go.",
    );
  }
  if (chat.annotations?.offline.some((e) => e.dialogues.length > 0)) {
    facts.push(n > 1 ? 'After a chat you answer some questions about it.' : 'After the chat you answer some questions about it.');
  }
  return facts;
}

/** "Before you start" of a chat unit: the task, its instructions and what the chat asks; the worker starts it. */
function ChatIntro({ unit, chat, busy, problem, onStart }: { unit: Unit; chat: ChatState; busy: boolean; problem: string | null; onStart: () => void }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => ref.current?.focus(), []);
  return (
    <section className="overview chat-intro">
      <h2 ref={ref} tabIndex={-1}>
        Before you start
      </h2>
      <TaskBriefing unit={unit} bucketNames={Object.keys(unit.buckets ?? {})}>
        <ul className="chat-facts">
          {chatFacts(chat).map((fact) => (
            <li key={fact}>{fact}</li>
          ))}
        </ul>
      </TaskBriefing>
      <ChatProblem text={problem} />
      <button type="button" className="btn btn-primary" onClick={onStart} disabled={busy}>
        {problem ? 'Try again' : 'Start the chat'}
      </button>
      <p role="status">{busy ? 'Starting the chat…' : ''}</p>
    </section>
  );
}

/** A screen between the chats, or while the page starts or submits. */
function ChatNotice({ heading, children }: { heading: string; children: ReactNode }) {
  const ref = useRef<HTMLHeadingElement>(null);
  useLayoutEffect(() => ref.current?.focus(), []);
  return (
    <section className="chat-notice panel">
      <h2 ref={ref} tabIndex={-1}>
        {heading}
      </h2>
      {children}
    </section>
  );
}

export function ChatUnit({ unit, chat: loaded, token, onCompleted, onRefused, reconnectDelays, draftDebounceMs, advanceDelayMs }: Props) {
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
  const { busy, problem, setProblem, perform } = usePerform();
  const current = chat.conversations.find((c) => c.position === chat.current) ?? null;
  const shown = shownConversation(chat);
  const [submitting, setSubmitting] = useState(false);
  // No draft while the unit is being submitted: one arriving after the submit would be refused.
  const ann = useChatAnnotations({ unit, chat, token, enabled: outcome !== 'stopped' && !submitting, draftDebounceMs });
  const { labelFor, refused, clearRefusal, labellingOf } = useOnlineLabelling(unit, chat, ann);

  const replaceChat = (next: ChatState) => dispatch({ type: 'event', event: { type: 'state', chat: next } });
  const start = () => perform(async () => replaceChat(await startChat(unitId, token)), 'The chat could not be started');
  const end = (c: Conversation) =>
    perform(async () => {
      const label = labelFor(c);
      clearRefusal();
      try {
        replaceChat(await endChat(unitId, token, label?.value));
      } catch (e) {
        if (refused(e, label !== null)) return;
        throw e;
      }
      if (label) ann.dropLabel(c.position, label.index);
    }, 'The chat could not be ended');
  const retry = (position: number) =>
    perform(async () => {
      await retryChat(unitId, token);
      dispatch({ type: 'retrying', position });
    }, 'Your partner could not be asked again');

  /**
   * Shown at once; a network error is retried once with the same id (never sent twice). The
   * latest bot message's label goes with it.
   */
  const send = async (c: Conversation, text: string): Promise<boolean> => {
    const { position } = c;
    const clientId = newClientId();
    const label = labelFor(c);
    dispatch({ type: 'sending', message: { clientId, position, text, index: null } });
    setProblem(null);
    clearRefusal();
    try {
      let sent: SentMessage;
      try {
        sent = await sendChatMessage(unitId, token, text, clientId, label?.value);
      } catch (e) {
        if (!(e instanceof NetworkError)) throw e;
        sent = await sendChatMessage(unitId, token, text, clientId, label?.value);
      }
      dispatch({ type: 'sent', clientId, index: sent.index });
      if (label?.value !== undefined) dispatch({ type: 'labelled', position, index: label.index, labels: label.value });
      if (label) ann.dropLabel(position, label.index);
      return true;
    } catch (e) {
      dispatch({ type: 'not-sent', clientId });
      if (!refused(e, label !== null)) setProblem(`Your message was not sent: ${messageOf(e)}`);
      return false;
    }
  };

  // Every conversation starts when the worker is ready: the first one after "Before you start".
  const firstPending = current !== null && current.status === 'pending' && chat.conversations.indexOf(current) === 0;

  const { submitError, submitUnit } = useChatSubmit({
    unitId,
    token,
    chat,
    ann,
    setSubmitting,
    ready: outcome === 'finished' && ann.shown === null && !ann.reviewing,
    onCompleted,
  });

  const title = unit.task?.title || 'Chat task';
  const briefing = <BriefingButton unit={unit} bucketNames={Object.keys(unit.buckets ?? {})} />;
  if (ann.shown) {
    return (
      <OfflineAnnotation
        title={title}
        chat={chat}
        shown={ann.shown}
        answers={ann.answers}
        update={ann.update}
        stepIndex={ann.stepIndex}
        onStep={ann.goToStep}
        onFinish={ann.reviewing ? () => void submitUnit() : ann.finish}
        finishLabel={ann.reviewing || chat.current === null ? 'Submit' : 'Continue'}
        submitting={submitting}
        submitError={ann.reviewing ? submitError : null}
        saver={ann.saver}
        instructions={briefing}
        advanceDelayMs={advanceDelayMs}
      />
    );
  }

  let body: ReactNode;
  if (outcome === 'finished') {
    body = (
      <ChatNotice heading="All chats are done">
        <p role="status">{submitError ? '' : 'Submitting your chats…'}</p>
        <ChatProblem text={submitError && `Your chats could not be submitted: ${submitError.message}`} />
        {submitError && (
          <button type="button" className="btn btn-primary" onClick={() => void submitUnit()}>
            Try again
          </button>
        )}
      </ChatNotice>
    );
  } else if (shown === null) {
    body = <ChatProblem text="This chat could not be shown. Please reload the page." />;
  } else if (shown.status === 'pending' && firstPending) {
    body = <ChatIntro unit={unit} chat={chat} busy={busy} problem={problem} onStart={() => void start()} />;
  } else if (shown.status === 'pending') {
    const done = chat.conversations.indexOf(shown);
    body = (
      <ChatNotice heading={`Chat ${done} of ${chat.conversations.length} is done.`}>
        <p>Next you will chat with {shown.partner}.</p>
        <ChatProblem text={problem} />
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
        onSend={(text) => send(shown, text)}
        onEnd={() => void end(shown)}
        onRetry={() => void retry(shown.position)}
        labelling={labellingOf(shown)}
      />
    );
  }

  const inConversation = shown !== null && shown.status !== 'pending' && outcome !== 'finished';
  return (
    <div className="app chat-app">
      <ChatHeader title={title} chat={chat} conversation={inConversation ? shown : null} instructions={briefing} />
      <p className="chat-connection" role="status">
        {outcome === 'chatting' && connection === 'lost' ? 'Connection lost — reconnecting…' : ''}
      </p>
      <main className="chat-main" id="main">
        {body}
      </main>
    </div>
  );
}
