/**
 * A parser for server-sent events (the `text/event-stream` format of the HTML standard), fed
 * with text as it arrives: chunks may end anywhere, even inside a line or between CR and LF.
 */

export interface SseEvent {
  /** The `event:` field; "message" when the event has none. */
  type: string;
  /** The `data:` lines joined with "\n". */
  data: string;
}

export class SseParser {
  /** Text of the line not ended yet. */
  private line = '';
  /** The last chunk ended with CR: a LF starting the next one belongs to that line end. */
  private afterCr = false;
  private type = '';
  private dataLines: string[] = [];

  /** Feeds more text; returns the events it completed. */
  push(chunk: string): SseEvent[] {
    const events: SseEvent[] = [];
    let start = 0;
    if (this.afterCr && chunk.startsWith('\n')) start = 1;
    this.afterCr = false;
    for (let i = start; i < chunk.length; i++) {
      const c = chunk[i];
      if (c !== '\n' && c !== '\r') continue;
      this.line += chunk.slice(start, i);
      const event = this.endLine();
      if (event) events.push(event);
      if (c === '\r') {
        if (i + 1 === chunk.length) this.afterCr = true;
        else if (chunk[i + 1] === '\n') i++;
      }
      start = i + 1;
    }
    this.line += chunk.slice(start);
    return events;
  }

  private endLine(): SseEvent | null {
    const line = this.line;
    this.line = '';
    if (line === '') return this.dispatch();
    if (line.startsWith(':')) return null;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    let value = colon === -1 ? '' : line.slice(colon + 1);
    if (value.startsWith(' ')) value = value.slice(1);
    if (field === 'event') this.type = value;
    else if (field === 'data') this.dataLines.push(value);
    // `id` and `retry` are not used by this page; unknown fields are ignored by the standard.
    return null;
  }

  /** A blank line ends an event; an event without data is dropped, as the standard says. */
  private dispatch(): SseEvent | null {
    const event = this.dataLines.length > 0 ? { type: this.type || 'message', data: this.dataLines.join('\n') } : null;
    this.type = '';
    this.dataLines = [];
    return event;
  }
}
