import { useEffect, useId, useRef, useState, type KeyboardEvent } from 'react';

interface Props {
  /** Whether the worker may write now; otherwise the box is read-only (it keeps focus). */
  enabled: boolean;
  maxChars: number;
  /** Sending waits for something else (a required label); `describedBy` says what. */
  blocked?: boolean;
  describedBy?: string;
  /** Sends the text; false when it was not sent (the text comes back into the box). */
  onSend: (text: string) => Promise<boolean>;
}

/** The worker's message box: Enter sends, Shift+Enter starts a new line. */
export function ChatComposer({ enabled, maxChars, blocked = false, describedBy, onSend }: Props) {
  const [text, setText] = useState('');
  const box = useRef<HTMLTextAreaElement>(null);
  const boxId = useId();
  const counterId = useId();
  const hintId = useId();
  const canSend = enabled && !blocked && text.trim() !== '' && text.length <= maxChars;

  // When writing becomes possible and nothing else holds focus (e.g. the button that started
  // the chat is gone), the box takes it.
  useEffect(() => {
    const active = document.activeElement;
    if (enabled && (active === null || active === document.body)) box.current?.focus();
  }, [enabled]);

  const send = () => {
    if (!canSend) return;
    const sent = text;
    setText('');
    box.current?.focus();
    void onSend(sent).then((ok) => {
      if (!ok) setText((now) => (now === '' ? sent : now));
    });
  };

  const onKeyDown = (e: KeyboardEvent<HTMLTextAreaElement>) => {
    if (e.key !== 'Enter' || e.shiftKey || e.nativeEvent.isComposing) return;
    e.preventDefault();
    send();
  };

  return (
    <form
      className="chat-composer"
      onSubmit={(e) => {
        e.preventDefault();
        send();
      }}
    >
      <label htmlFor={boxId} className="chat-composer-label">
        Your message
      </label>
      <textarea
        ref={box}
        id={boxId}
        className="chat-input"
        rows={2}
        value={text}
        maxLength={maxChars}
        readOnly={!enabled}
        aria-disabled={!enabled}
        aria-describedby={`${hintId} ${counterId}`}
        onChange={(e) => setText(e.target.value)}
        onKeyDown={onKeyDown}
      />
      <div className="chat-composer-row">
        <span className="chat-composer-info">
          <span id={hintId}>Enter sends, Shift+Enter starts a new line.</span>{' '}
          <span id={counterId} className="chat-counter">
            {text.length} / {maxChars} characters
          </span>
        </span>
        <button type="submit" className="btn btn-primary" disabled={!canSend} aria-describedby={describedBy}>
          Send
        </button>
      </div>
    </form>
  );
}
