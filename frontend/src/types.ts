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

export interface Unit {
  unit_id: string;
  status: string;
  task: { title: string; description_html: string };
  speaker_names: Record<string, string>;
  seconds_remaining: number | null;
  dialogues: Dialogue[];
  buckets: Record<string, Bucket>;
  draft: Draft | null;
  completion_code: string | null;
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

/** Context a dependency function sees: the annotated turn. */
export interface TurnContext {
  speaker: Speaker | null;
}
