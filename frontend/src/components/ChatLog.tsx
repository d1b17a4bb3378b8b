import { useLayoutEffect, useRef, type ReactNode } from 'react';
import type { OutgoingMessage } from '../chat';
import type { ChatMessage, ChatRole, Conversation } from '../types';

/** How close to the end (px) the worker must be for new messages to scroll the log. */
const NEAR_BOTTOM_PX = 80;

interface BubbleProps {
  role: ChatRole;
  speaker: string;
  text: string;
  note?: string;
  /** Under the text: the message's label. */
  children?: ReactNode;
}

function ChatBubble({ role, speaker, text, note, children }: BubbleProps) {
  return (
    <li className={role === 'worker' ? 'chat-message is-worker' : 'chat-message is-bot'}>
      <span className="chat-speaker">{speaker}</span>
      <p className="text">{text}</p>
      {note && <span className="chat-note">{note}</span>}
      {children}
    </li>
  );
}

interface Props {
  conversation: Conversation;
  outgoing: OutgoingMessage[];
  /** What to show under a stored message (its label), if anything. */
  renderLabel?: (message: ChatMessage) => ReactNode;
  /** The log's accessible name (default: "Conversation with <partner>"). */
  label?: string;
}

/**
 * The messages of one conversation, the worker's unconfirmed ones ("Sending…") and the bot
 * reply as it streams in. While the reply streams the log is `aria-busy`, so screen readers
 * announce the finished message once instead of every piece.
 */
export function ChatLog({ conversation, outgoing, renderLabel, label }: Props) {
  const { messages, reply, partner } = conversation;
  const log = useRef<HTMLDivElement>(null);
  const followsEnd = useRef(true);
  const streaming = reply !== null && reply.text !== '' ? reply : null;

  useLayoutEffect(() => {
    const el = log.current;
    if (el && followsEnd.current) el.scrollTop = el.scrollHeight;
  }, [messages, outgoing.length, reply]);

  return (
    <div
      ref={log}
      className="chat-log"
      role="log"
      aria-live="polite"
      aria-label={label ?? `Conversation with ${partner}`}
      aria-busy={streaming !== null}
      // Scrollable, so keyboard users can scroll it.
      tabIndex={0}
      onScroll={(e) => {
        const el = e.currentTarget;
        followsEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < NEAR_BOTTOM_PX;
      }}
    >
      <ol className="chat-messages">
        {messages.map((m) => (
          <ChatBubble key={`m${m.index}`} role={m.role} speaker={m.role === 'worker' ? 'You' : partner} text={m.text}>
            {renderLabel?.(m)}
          </ChatBubble>
        ))}
        {outgoing.map((o) => (
          <ChatBubble key={o.clientId} role="worker" speaker="You" text={o.text} note="Sending…" />
        ))}
        {streaming && <ChatBubble key={`m${streaming.index}`} role="bot" speaker={partner} text={streaming.text} />}
      </ol>
    </div>
  );
}
