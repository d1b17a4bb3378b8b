import { canWrite, type OutgoingMessage } from '../chat';
import type { ChatState, Conversation } from '../types';
import { ChatComposer } from './ChatComposer';
import { ChatLog } from './ChatLog';
import { useReplyLabels, type Labelling } from './ReplyLabels';

export type { Labelling } from './ReplyLabels';

interface Props {
  chat: ChatState;
  conversation: Conversation;
  /** The worker's messages on their way, for this conversation. */
  outgoing: OutgoingMessage[];
  /** A request (end, retry) is under way. */
  busy: boolean;
  /** Why the worker's last action failed, in words. */
  problem: string | null;
  onSend: (text: string) => Promise<boolean>;
  onEnd: () => void;
  onRetry: () => void;
  labelling: Labelling | null;
}

/** What stops a conversation for good, told in place of the message box. */
function StoppedNotice({ conversation }: { conversation: Conversation }) {
  if (conversation.status === 'timed_out') {
    return (
      <div className="chat-alert" role="alert">
        <p>
          <strong>The time to answer ran out.</strong> This chat has ended and the task went back to the pool.
        </p>
        <p>Please open your task link again to get new work.</p>
      </div>
    );
  }
  return (
    <div className="chat-alert" role="alert">
      {conversation.error && <p>{conversation.error.message}</p>}
      <p>
        Your partner had a technical problem and this chat cannot continue. Please open your task link again.
      </p>
    </div>
  );
}

/** One conversation: the log, what the bot is doing, and what the worker can do now. */
export function ChatConversation({ chat, conversation, outgoing, busy, problem, onSend, onEnd, onRetry, labelling }: Props) {
  const { status, reply, error, partner } = conversation;
  const active = status === 'active';
  const typing = active && reply !== null && reply.text === '';
  const { renderLabel, blocked, hintId, hint, dialog } = useReplyLabels(conversation, labelling);

  return (
    <section className="chat">
      <ChatLog conversation={conversation} outgoing={outgoing} renderLabel={renderLabel} />
      <p className="chat-typing" role="status">
        {typing ? `${partner} is typing…` : ''}
      </p>
      {active && error && (
        <div className="chat-alert" role="alert">
          <p>{error.message}</p>
          {error.retry && (
            <button type="button" className="btn btn-small" onClick={onRetry} disabled={busy}>
              Try again
            </button>
          )}
        </div>
      )}
      {(status === 'timed_out' || status === 'failed') && <StoppedNotice conversation={conversation} />}
      {problem && (
        <p className="chat-alert" role="alert">
          {problem}
        </p>
      )}
      {hint}
      {active && conversation.can_end && (
        <div className="chat-end">
          <p>
            You have written all {chat.num_turns} messages of this chat. Press <strong>End chat</strong> to finish it.
          </p>
          <button
            type="button"
            className="btn btn-primary"
            onClick={onEnd}
            disabled={busy || blocked}
            aria-describedby={blocked ? hintId : undefined}
          >
            End chat
          </button>
        </div>
      )}
      {active && (
        <ChatComposer
          enabled={canWrite(conversation, outgoing)}
          maxChars={chat.max_message_chars}
          blocked={blocked}
          describedBy={blocked ? hintId : undefined}
          onSend={onSend}
        />
      )}
      {dialog}
    </section>
  );
}
