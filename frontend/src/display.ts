/**
 * Display-only text helpers. Stored answers always keep the raw bucket strings; only what the
 * worker reads goes through these.
 */

export type Show = (text: string) => string;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Replace the placeholders of `speaker_names` (e.g. `SPEAKER_X`) with their display names. */
export function makeShow(names: Record<string, string> | null | undefined): Show {
  const keys = Object.keys(names ?? {}).filter((k) => k.length > 0);
  if (keys.length === 0) return (text) => text;
  keys.sort((a, b) => b.length - a.length);
  const pattern = new RegExp(keys.map(escapeRegExp).join('|'), 'g');
  return (text) => String(text).replace(pattern, (m) => names![m] ?? m);
}

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

/** Placeholder substitution inside trusted requester HTML; the names themselves are escaped. */
export function makeShowHtml(names: Record<string, string> | null | undefined): Show {
  const escaped: Record<string, string> = {};
  for (const [k, v] of Object.entries(names ?? {})) escaped[k] = escapeHtml(String(v));
  return makeShow(escaped);
}

/** Question keys such as `grammar_q` are identifiers, not text meant to be read. */
export function isIdentifierKey(question: string): boolean {
  return /^[A-Za-z0-9]+(_[A-Za-z0-9]+)+$/.test(question);
}

/** A readable label for a question: its text, or a humanised identifier (`value_q` → "Value"). */
export function questionLabel(question: string, show: Show): string {
  if (!isIdentifierKey(question)) return show(question);
  const words = question.replace(/_q$/i, '').replace(/_/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** A readable title for a bucket name or task title (`consistency_label` → "Consistency label"). */
export function humanize(name: string): string {
  const words = name.replace(/[_-]+/g, ' ').trim();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** Display name of a turn's speaker: the bot is `SPEAKER_X`, the human partner `SPEAKER_Y`. */
export function speakerLabel(speaker: string, names: Record<string, string> | null | undefined): string {
  if (speaker === 'system') return names?.SPEAKER_X || 'Bot';
  if (speaker === 'user') return names?.SPEAKER_Y || 'User';
  return speaker;
}

/** The number shown for a turn everywhere in the page. */
export function turnNumber(index: number): number {
  return index + 1;
}
