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

/** Words at the end of a bucket id that name its kind of question, not its subject. */
const KIND_WORDS = new Set(['likert', 'turn', 'turns', 'dialogue', 'comparative', 'label', 'labels', 'select', 'foreach', 'flow']);

/**
 * The heading of a bucket for workers: its `task_title` (or name) in words, without the words
 * that name its kind (`grammatical_likert_turn` → "Grammatical", `consistency_label` →
 * "Consistency"): ids such as "Grammatical likert turn" mean nothing to a worker.
 */
export function bucketTitle(title: string): string {
  const words = title.split(/[_-]+/).filter(Boolean);
  let end = words.length;
  while (end > 1 && KIND_WORDS.has(words[end - 1].toLowerCase())) end -= 1;
  return humanize(words.slice(0, end).join(' '));
}

/** Display name per speaker, as the unit's `speaker_names` gives them. */
export interface SpeakerNames {
  system: string;
  user: string;
}

const DEFAULT_NAMES: SpeakerNames = { system: 'Bot', user: 'User' };
/** Older servers named the placeholders instead (`SPEAKER_X` being the bot). */
const LEGACY_KEYS: Record<string, keyof SpeakerNames> = { SPEAKER_X: 'system', SPEAKER_Y: 'user' };

export function speakerNames(raw: Record<string, string> | null | undefined): SpeakerNames {
  const names = { ...DEFAULT_NAMES };
  for (const [key, value] of Object.entries(raw ?? {})) {
    const speaker = LEGACY_KEYS[key] ?? key;
    if ((speaker === 'system' || speaker === 'user') && typeof value === 'string' && value.trim()) {
      names[speaker] = value;
    }
  }
  return names;
}

/**
 * What the placeholders mean for one turn: `SPEAKER_X` is the speaker of the turn being annotated,
 * `SPEAKER_Y` the other one. Texts about the whole dialogue (speaker null) read X as the bot.
 */
export function placeholderNames(names: SpeakerNames, speaker: string | null): Record<string, string> {
  const x = speaker === 'user' ? 'user' : 'system';
  return { SPEAKER_X: names[x], SPEAKER_Y: names[x === 'user' ? 'system' : 'user'] };
}

/** `show` for the texts of one turn (or of the whole dialogue when `speaker` is null). */
export function showFor(names: SpeakerNames, speaker: string | null): Show {
  return makeShow(placeholderNames(names, speaker));
}

/** `show` per turn speaker (`null`: the whole dialogue, read as the bot's), built once per names. */
export function makeShows(names: SpeakerNames): (speaker: string | null) => Show {
  const system = showFor(names, 'system');
  const user = showFor(names, 'user');
  return (speaker) => (speaker === 'user' ? user : system);
}

/** Display name of a turn's speaker. */
export function speakerLabel(speaker: string, names: SpeakerNames): string {
  if (speaker === 'system' || speaker === 'user') return names[speaker];
  return speaker;
}

/** The number shown for a turn everywhere in the page. */
export function turnNumber(index: number): number {
  return index + 1;
}
