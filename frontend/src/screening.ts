/**
 * Screening (training) units: what the intro says, when a dialogue is checked and how the
 * server's feedback is worded. Correctness is never computed here: the server's check endpoint
 * decides which turns are wrong (docs/worker-api.md, "Screening (training) units").
 */
import { answersForSubmit, type Step } from './answers';
import { turnNumber } from './display';
import type { Answers, CheckResult, FeedbackSelection, ScreeningInfo } from './types';

/** The intro sentences, from the unit's `screening` payload (nothing hard-coded). */
export function screeningIntro(info: ScreeningInfo): { count: string; pass: string[] } {
  const n = info.dialogues;
  const count =
    n === 1
      ? 'Before the real task, you label 1 training dialogue.'
      : `Before the real task, you label ${n} training dialogues.`;
  const pass = info.graded.map((g) => {
    const allowed =
      g.allowed_mistakes === 0
        ? 'with no mistakes'
        : g.allowed_mistakes === 1
          ? 'with at most 1 mistake'
          : `with at most ${g.allowed_mistakes} mistakes`;
    return `To pass, label training dialogue ${g.position} of ${n} ${allowed} at your first check.`;
  });
  return { count, pass };
}

/** Whether step `index` (0-based into `steps`) is the last step of its dialogue. */
export function endsDialogue(steps: Step[], index: number): boolean {
  const step = steps[index];
  if (!step) return false;
  const next = steps[index + 1];
  return !next || next.dialogueKey !== step.dialogueKey;
}

/** The index of the last step of a dialogue (-1 when it has none). */
export function lastStepOf(steps: Step[], dialogueKey: string): number {
  for (let i = steps.length - 1; i >= 0; i--) if (steps[i].dialogueKey === dialogueKey) return i;
  return -1;
}

/** One dialogue's answers as the check endpoint takes them (`{bucket: {target: value}}`). */
export function checkBody(answers: Answers, dialogueKey: string): Answers[string] {
  return answersForSubmit(answers)[dialogueKey] ?? {};
}

/** A stable text of a JSON value (object keys sorted), to tell whether answers changed. */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(stableJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value as object)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${stableJson((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** The last check of a dialogue: the answers sent and the server's answer. */
export interface CheckRecord {
  sent: string;
  result: CheckResult;
}

/**
 * Whether the worker may leave a dialogue without a new check: only when its last check was
 * corrected (no wrong turn left) for exactly the answers it has now.
 */
export function needsCheck(record: CheckRecord | undefined, answers: Answers, dialogueKey: string): boolean {
  if (!record) return true;
  return !record.result.corrected || record.sent !== stableJson(checkBody(answers, dialogueKey));
}

/** What the live region announces after a check. */
export function checkAnnouncement(result: CheckResult, dialogueNumber: number): string {
  if (result.corrected) {
    return result.first_check
      ? `Training dialogue ${dialogueNumber}: all answers are correct.`
      : `Training dialogue ${dialogueNumber}: all turns are corrected now.`;
  }
  const turns = result.wrong.map((w) => `Turn ${turnNumber(w.turn)}`).join(', ');
  const n = result.wrong.length;
  return `Training dialogue ${dialogueNumber}: ${n === 1 ? '1 turn needs' : `${n} turns need`} correcting (${turns}). Change your answers and check again.`;
}

/** One selection as a line of text: "Question: answer, answer". */
export function selectionText(s: FeedbackSelection, show: (text: string) => string = (t) => t): string {
  const answers = s.answers.map(show).join(', ');
  const question = show(s.question).trim();
  if (!answers) return question;
  // "Select ALL labels that apply:" already ends in punctuation: no second colon.
  return /[:?]$/.test(question) ? `${question} ${answers}` : `${question}: ${answers}`;
}
