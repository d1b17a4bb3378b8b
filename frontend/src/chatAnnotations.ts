/**
 * Annotations during and after chats (docs/chat-api.md, "Annotations during and after chats"),
 * built into the shapes the static annotation page reads: a conversation becomes a dialogue
 * (the worker is `user`, the bot `system`), the online bucket asks about its bot messages, and
 * the offline entries become a static-unit-like object for the annotation steps.
 */
import { buildSteps, sanitizeAnswers } from './answers';
import { turnContext } from './context';
import type { DepContext } from './dependencies';
import { describeGap } from './require';
import { restoreTimings } from './timings';
import { isPlainObject } from './tree';
import type {
  Answers,
  Bucket,
  BucketValue,
  ChatMessage,
  ChatState,
  Conversation,
  Dialogue,
  OfflineDialogue,
  OfflineEntry,
  StepTiming,
  Turn,
  Unit,
} from './types';
import { sanitizeValue, valueGaps } from './values';

/** Labels not sent yet: `online["<position>"]["<index>"]`, as the unit's draft keeps them. */
export type OnlineLabels = Record<string, Record<string, BucketValue>>;

/** A conversation's messages as dialogue turns, each with its message index. */
export function conversationTurns(c: Conversation | undefined): Turn[] {
  return (c?.messages ?? []).map((m) => ({ index: m.index, speaker: m.role === 'bot' ? 'system' : 'user', text: m.text }));
}

/** The online bucket applied to one conversation: every bot message is a target turn. */
export interface OnlineView {
  bucket: Bucket;
  dialogue: Dialogue;
}

export function onlineView(bucket: Bucket, c: Conversation): OnlineView {
  const key = `online-${c.position}`;
  return {
    dialogue: { key, turns: conversationTurns(c), turns2: null, persona: null, annotation_tasks: [] },
    bucket: { ...bucket, targets: { [key]: c.messages.filter((m) => m.role === 'bot').map((m) => m.index) } },
  };
}

/** The bucket's values in a conversation: the stored labels, with the unsent ones. */
export function onlineValues(c: Conversation, unsent: Record<string, BucketValue> | undefined): Record<string, BucketValue> {
  const values: Record<string, BucketValue> = {};
  for (const m of c.messages) if (m.role === 'bot' && m.labels != null) values[String(m.index)] = m.labels;
  return { ...values, ...unsent };
}

/** What `_dep_` conditions see for the label of bot message `index`. */
export function labelContext(view: OnlineView, index: number, values: Record<string, BucketValue>): DepContext {
  return turnContext(view.dialogue, index, view.bucket, values);
}

/**
 * The bot message whose label goes with the worker's next message or END: the latest message
 * of an active conversation, when it is the bot's and has no stored label.
 */
export function labelTarget(c: Conversation): ChatMessage | null {
  const last = c.messages[c.messages.length - 1];
  return c.status === 'active' && last?.role === 'bot' && last.labels == null ? last : null;
}

/** What a label still misses to be complete, in words (`describeGap`). */
export function labelMissing(view: OnlineView, index: number, values: Record<string, BucketValue>, show: (s: string) => string): string[] {
  return valueGaps(view.bucket, values[String(index)], labelContext(view, index, values)).map((g) => describeGap(g, show));
}

/** Whether the unit asks for any annotation (otherwise it is a plain chat unit). */
export function hasAnnotations(chat: ChatState): boolean {
  const a = chat.annotations;
  return !!a && (a.online != null || (a.offline ?? []).some((e) => e.dialogues.length > 0));
}

function conversationAt(chat: ChatState, position: number | null | undefined): Conversation | undefined {
  return chat.conversations.find((c) => c.position === position);
}

/** The entries with something to annotate whose conversation has ended, in order. */
export function endedEntries(chat: ChatState): OfflineEntry[] {
  return (chat.annotations?.offline ?? []).filter(
    (e) => e.dialogues.length > 0 && conversationAt(chat, e.after)?.status === 'ended',
  );
}

/** The entry to annotate now: the first ended one the worker has not finished. */
export function pendingEntry(chat: ChatState, finished: readonly number[]): OfflineEntry | null {
  return endedEntries(chat).find((e) => !finished.includes(e.after)) ?? null;
}

/**
 * A static-unit-like object of offline dialogues: each dialogue's turns from its conversation
 * (a comparison: `left` as `turns`, `right` as `turns2`), each bucket's targets from the entry.
 */
export function offlineUnit(unit: Unit, chat: ChatState, dialogues: OfflineDialogue[]): Unit {
  const buckets: Record<string, Bucket> = {};
  for (const d of dialogues) {
    for (const name of d.annotation_tasks) {
      const bucket = unit.buckets[name];
      if (!bucket) continue;
      buckets[name] ??= { ...bucket, targets: {} };
      if (bucket.level === 'turn') buckets[name].targets[d.key] = d.targets?.[name] ?? [];
    }
  }
  return {
    ...unit,
    draft: null,
    dialogues: dialogues.map((d) => ({
      key: d.key,
      turns: conversationTurns(conversationAt(chat, d.conversation ?? d.left)),
      turns2: d.conversation === null ? conversationTurns(conversationAt(chat, d.right)) : null,
      persona: null,
      annotation_tasks: d.annotation_tasks,
    })),
    buckets,
  };
}

/** Every offline dialogue whose conversation has ended, in order (drafts, timings, submit). */
export function endedDialogues(chat: ChatState): OfflineDialogue[] {
  return endedEntries(chat).flatMap((e) => e.dialogues);
}

/** The line under an offline step's heading: which conversation(s) it is about. */
export function offlineContext(chat: ChatState, d: OfflineDialogue | undefined): string {
  if (!d) return '';
  const partner = (p: number | null | undefined) => conversationAt(chat, p)?.partner ?? 'your partner';
  if (d.conversation !== null) return `Your chat with ${partner(d.conversation)}`;
  return `Your chats with ${partner(d.left)} (left) and ${partner(d.right)} (right)`;
}

/** A chat unit's draft, checked against the unit (see `sanitizeAnswers`). */
export interface ChatDraft {
  online: OnlineLabels;
  answers: Answers;
  /** The `after` positions whose offline steps the worker finished. */
  finished: number[];
  position: unknown;
  timings: StepTiming[];
}

/** The unsent label a draft holds for the bot message that can still be labelled (see `labelTarget`). */
function restoreOnline(unit: Unit, chat: ChatState, raw: unknown): OnlineLabels {
  const name = chat.annotations?.online?.bucket;
  const bucket = name ? unit.buckets[name] : undefined;
  const out: OnlineLabels = {};
  if (!bucket || !isPlainObject(raw)) return out;
  for (const c of chat.conversations) {
    const target = labelTarget(c);
    const saved = raw[String(c.position)];
    if (!target || !isPlainObject(saved)) continue;
    const view = onlineView(bucket, c);
    const value = sanitizeValue(view.bucket, saved[String(target.index)], labelContext(view, target.index, onlineValues(c, undefined)));
    if (value !== undefined) out[c.position] = { [target.index]: value };
  }
  return out;
}

export function restoreChatDraft(unit: Unit, chat: ChatState): ChatDraft {
  const raw: unknown = unit.draft?.answers;
  const position: unknown = unit.draft?.position;
  const ended = offlineUnit(unit, chat, endedDialogues(chat));
  const finished = isPlainObject(position) && Array.isArray(position.finished) ? position.finished : [];
  return {
    online: restoreOnline(unit, chat, isPlainObject(raw) ? raw.online : undefined),
    answers: sanitizeAnswers(ended, raw),
    finished: finished.filter((p): p is number => Number.isInteger(p)),
    position,
    timings: restoreTimings(isPlainObject(position) ? position.timings : undefined, buildSteps(ended)),
  };
}
