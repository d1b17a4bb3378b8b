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
  | 'comparative'
  | 'text';

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

/**
 * Limits of a free text: a text bucket's answer (`text`) or the "Explain your answer" field
 * (`explain`). Shorter than `min_chars` (without the spaces around it) counts as not answered.
 */
export interface TextLimits {
  min_chars: number;
  max_chars: number;
  multiline: boolean;
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
  /** `config: "text"` buckets: how long the answer may be, and whether it takes line breaks. */
  text?: TextLimits | null;
  /** Buckets with `"explain": true`: the limits of the explanation under the answer. */
  explain?: TextLimits | null;
  /** dialogue key -> target turn indices (turn-level buckets only). */
  targets: Record<string, number[]>;
}

export interface Draft {
  answers: Answers;
  position: unknown;
  saved_at?: string;
}

/** What the page shows for a unit; this page version knows `annotation`, `screening` and `chat`. */
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
  /** Chat units only: the server's state of the worker's chats (docs/chat-api.md). */
  chat?: ChatState;
}

/** Chat units (docs/chat-api.md). */
export type ChatRole = 'worker' | 'bot';
export type ConversationStatus = 'pending' | 'active' | 'ended' | 'timed_out' | 'failed';

export interface ChatMessage {
  index: number;
  role: ChatRole;
  text: string;
  sent_at: string;
  /** Bot messages of units with online labels: the label stored for it (final), null until then. */
  labels?: BucketValue | null;
}

/** The bot reply being generated: the `index` it will have and its text so far. */
export interface ChatReply {
  index: number;
  text: string;
}

/** The last bot problem of a conversation; `retry`: the worker may ask again. */
export interface ChatError {
  message: string;
  retry: boolean;
}

export interface Conversation {
  position: number;
  /** Neutral name of the bot: "Partner", "Partner A", "Partner B". */
  partner: string;
  status: ConversationStatus;
  /** The worker's messages so far (the opening "Hi!" not counted). */
  turns_done: number;
  can_end: boolean;
  /** When the worker's next message is due (ISO time); null while the bot replies. */
  respond_by: string | null;
  reply: ChatReply | null;
  error: ChatError | null;
  messages: ChatMessage[];
}

/** The `chat` object of a chat unit, and the data of the `state` event. */
export interface ChatState {
  num_turns: number;
  max_resp_time: number;
  max_message_chars: number;
  conversation_start_mode: string;
  /** Position of the conversation the worker is in; null once every conversation has ended. */
  current: number | null;
  conversations: Conversation[];
  /** Units whose conf asks for annotations during or after the chats. */
  annotations?: ChatAnnotations | null;
  /** Arena units (docs/arena.md): the vote. */
  arena?: ArenaVote;
}

/** `chat.arena` of an arena unit: the vote it asks for and where it stands. */
export interface ArenaVote {
  vote: 'per_turn' | 'end';
  question: string;
  options: { value: string; label: string }[];
  votes: { turn: number; choice: string }[];
  /** The turn to vote on now (both replies are in), or null. */
  vote_due: number | null;
  finished: boolean;
  /** The bots' names per side, once the battle is voted, when the conf reveals them. */
  models: { A: string; B: string } | null;
}

/** `chat.annotations`: labels while chatting and annotation steps after each chat. */
export interface ChatAnnotations {
  online: OnlineAnnotation | null;
  offline: OfflineEntry[];
}

/** The bucket each bot message is labelled with; `required`: before the next message or END. */
export interface OnlineAnnotation {
  bucket: string;
  required: boolean;
}

/** What to annotate after the conversation at position `after` ends, in the order to show it. */
export interface OfflineEntry {
  after: number;
  dialogues: OfflineDialogue[];
}

/**
 * One dialogue to annotate: the conversation at `conversation`, or (`conversation: null`) a
 * comparison of the conversations at `left` and `right`.
 */
export interface OfflineDialogue {
  key: string;
  conversation: number | null;
  left?: number;
  right?: number;
  annotation_tasks: string[];
  /** Per turn-level bucket, the message indices it asks about; null until the conversation ended. */
  targets?: Record<string, number[]> | null;
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
  /** Arena screening: battles still to pass before the task (a message says so). */
  battles_left?: number;
}

/** `{question: {answer: {sub_question: {...}}}}` */
export interface TreeValue {
  [question: string]: { [answer: string]: TreeValue };
}
export type BucketValue = TreeValue | string[] | Record<string, number> | string;

/**
 * answers[dialogue_key][bucket_name][target] = value; target is a turn index string or
 * "dialogue". Buckets with `explain` also hold `explanation: {target: text}` beside the targets.
 */
export type Answers = Record<string, Record<string, BucketAnswers>>;
export type BucketAnswers = Record<string, BucketValue | Explanations>;
/** target -> the worker's explanation of that answer. */
export type Explanations = Record<string, string>;

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
