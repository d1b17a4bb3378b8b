/** Shapes of the worker API (docs/worker-api.md). */

export type Speaker = 'user' | 'system' | string;

export interface Turn {
  index: number;
  speaker: Speaker;
  text: string;
}

export interface Dialogue {
  key: string;
  turns: Turn[];
  turns2: Turn[] | null;
  persona: string[] | null;
  annotation_tasks: string[];
}

export type BucketConfig =
  | 'button_flow'
  | 'nondetails_button_flow'
  | 'nondetails_nonhelp_button_flow'
  | 'multiselect'
  | 'likert-5-turn'
  | 'likert-5-dialogue'
  | 'foreach-5-select'
  | 'foreach-5-select-dialogue'
  | 'comparative';

/** A question of a tree bucket: answers (each mapping to nested questions) plus `_type_`/`_dep_`. */
export interface QuestionSpec {
  _type_?: { checkbox?: object } | unknown;
  _dep_?: Record<string, unknown>;
  [answer: string]: unknown;
}
export type QuestionsSpec = Record<string, QuestionSpec>;

export interface MultiselectOption {
  value: string;
  label: string;
  speaker?: string | null;
}
export interface LikertOption {
  label: string;
  question?: string;
}
export interface ForeachOption {
  value: string;
  label: string;
}

export interface Require {
  level: 'turn' | 'dialogue';
}

export interface Bucket {
  config: BucketConfig;
  level: 'turn' | 'dialogue';
  question?: string | null;
  task_title?: string | null;
  options: unknown;
  label_details?: Record<string, string> | null;
  require?: Require | null;
  instructions_html?: string | null;
  /** dialogue key -> target turn indices (turn-level buckets only). */
  targets: Record<string, number[]>;
}

export interface Draft {
  answers: Answers;
  position: unknown;
  saved_at?: string;
}

/** What the page shows for a unit; this page version knows `annotation` and `screening`. */
export type UnitKind = 'annotation' | 'screening' | 'chat' | string;

export interface Unit {
  unit_id: string;
  /** Absent from servers older than the field: read as "annotation". */
  kind?: UnitKind;
  status: string;
  task: { title: string; description_html: string };
  /** Display name per speaker: `{"system": "Bot", "user": "User"}`. */
  speaker_names: Record<string, string>;
  seconds_remaining: number | null;
  dialogues: Dialogue[];
  buckets: Record<string, Bucket>;
  draft: Draft | null;
  completion_code: string | null;
  /** Screening (training) units only: how many training dialogues, which are graded. */
  screening?: ScreeningInfo;
}

/** A screening unit's intro data (never an expected answer). */
export interface ScreeningInfo {
  dialogues: number;
  /** `position` is 1-based, in the unit's (file) order. */
  graded: Array<{ position: number; key: string; allowed_mistakes: number }>;
}

/** A question and the answers chosen for it, as the server words feedback. */
export interface FeedbackSelection {
  question: string;
  answers: string[];
}

/** One wrong turn of a checked training dialogue. */
export interface WrongTurn {
  turn: number;
  yours: FeedbackSelection[];
  /** `[]` means "no selection is correct". */
  correct: FeedbackSelection[];
  explanation: string;
}

/** The answer of `POST /api/units/<id>/dialogues/<key>/check`. */
export interface CheckResult {
  dialogue: string;
  first_check: boolean;
  mistakes: number;
  counted_mistakes: number;
  corrected: boolean;
  wrong: WrongTurn[];
}

/** What a screening unit's submit adds. */
export interface ScreeningOutcome {
  passed: boolean;
  message: string | null;
}

/** `{question: {answer: {sub_question: {...}}}}` */
export interface TreeValue {
  [question: string]: { [answer: string]: TreeValue };
}
export type BucketValue = TreeValue | string[] | Record<string, number> | string;

/** answers[dialogue_key][bucket_name][target] = value; target is a turn index string or "dialogue". */
export type Answers = Record<string, Record<string, Record<string, BucketValue>>>;

export const DIALOGUE_TARGET = 'dialogue';

export const TREE_CONFIGS: ReadonlySet<string> = new Set([
  'button_flow',
  'nondetails_button_flow',
  'nondetails_nonhelp_button_flow',
]);

/** Time the worker spent on one step (dialogue × bucket): `[start_ms, end_ms]` per visit. */
export interface StepTiming {
  dialogue: string;
  bucket: string;
  intervals: Array<[number, number]>;
}

/** The submit's `timings`. */
export interface SubmitTimings {
  started_at: string;
  submitted_at: string;
  duration_ms: number;
  steps: StepTiming[];
}

/** Context a dependency function sees: the annotated turn. */
export interface TurnContext {
  speaker: Speaker | null;
}
