/** Shapes of the requester dashboard API (/work/dashboard-contract.md, docs/dashboard.md). */
import type { Unit } from '../types';

export interface Session {
  task: string;
  csrf_token: string;
}

export interface Progress {
  total: number;
  done: number;
  in_progress: number;
  waiting: number;
}

export interface RunSummary {
  run_id: number;
  status: string;
  started_at: string | null;
  units: Record<string, number>;
}

export interface ThroughputPoint {
  t: string;
  submissions: number;
}

export interface PassRate {
  passed: number;
  failed: number;
  pass_rate: number | null;
  /** The task screens workers / mixes in gold units (absent from older servers: shown). */
  used?: boolean;
}

export interface Quota {
  bot: string;
  needed: number;
  done: number;
  in_progress: number;
}

export interface Overview {
  task: string;
  current_run: number | null;
  state: 'running' | 'complete' | 'stopped' | 'review_only' | string;
  provider: string;
  server_time: string | null;
  progress: Progress;
  runs: RunSummary[];
  throughput: { bucket_seconds: number; points: ThroughputPoint[] };
  time_per_unit: { count: number; median_s: number | null; p90_s: number | null };
  screening: PassRate;
  gold: PassRate;
  live_chats: number;
  quotas: Quota[];
  sync_failures: { reviews: number; bonuses: number };
  /** An arena task: the Leaderboard tab is shown. */
  arena?: boolean;
}

export interface Qualification {
  name: string;
  value: number | null;
}

export interface WorkerRow {
  pseudonym: string;
  provider: string;
  units_done: number;
  in_progress: number;
  median_s: number | null;
  last_seen: string | null;
  screening: 'passed' | 'failed' | string | null;
  gold: { passed: number; failed: number } | null;
  qualifications: Qualification[];
  flags: string[];
}

export type DecisionName = 'approve' | 'reject' | 'soft_reject';

export interface Decision {
  decision: DecisionName | string;
  reason: string | null;
  rejection_category?: string | null;
  sync_state: 'sent' | 'pending' | 'failed' | 'recorded' | string;
  last_error: string | null;
  decided_at: string | null;
}

export interface ReviewItem {
  unit_id: string;
  worker: string | null;
  pool: string;
  kind: 'static' | 'chat' | string;
  status: string;
  submitted_at: string | null;
  duration_s: number | null;
  decision: Decision | null;
  flagged: boolean;
  verified: boolean | null;
  buckets: string[];
  bots: string[];
}

export interface ReviewPage {
  total: number;
  offset: number;
  limit: number;
  buckets: string[];
  items: ReviewItem[];
}

export interface BonusRow {
  id: number;
  amount: number;
  reason: string;
  state: 'paid' | 'pending' | 'failed' | 'uncertain' | 'recorded' | string;
  last_error: string | null;
}

export interface ChatLogMessage {
  index: number;
  role: 'worker' | 'bot' | string;
  text: string;
  labels: Record<string, unknown> | null;
}

export interface ConversationLog {
  conversation_id: number;
  bot: string;
  status: string;
  position: number;
  messages: ChatLogMessage[];
}

export interface UnitDetail extends Omit<ReviewItem, 'buckets' | 'bots'> {
  bonuses: BonusRow[];
  payload: Partial<Unit> | null;
  answers: Record<string, unknown> | null;
  timings: Record<string, unknown> | null;
  conversations: ConversationLog[];
  /** The data's `dialogue_id` per dialogue key (absent from older servers). */
  dialogue_ids?: Record<string, string | null>;
}

export type BulkResult =
  | { unit_id: string; ok: true; decision: Decision }
  | { unit_id: string; ok: false; error: string };

export interface SyncFailures {
  reviews: Array<{ unit_id: string; decision: string; attempts: number; last_error: string | null }>;
  bonuses: Array<{
    id: number;
    unit_id: string;
    worker: string | null;
    amount: number;
    state: string;
    attempts: number;
    last_error: string | null;
  }>;
}

export interface QuestionResult {
  bucket: string;
  question: string;
  /** The question as the worker read it (speakers named, a nested one after its parents). */
  text: string | null;
  /** Items asked the question. */
  n: number;
  answers: Record<string, number>;
  /** How an answer was shown to the worker (an option's label), where it differs. */
  labels?: Record<string, string>;
  /** Items asked that got no answer: with them, single answers add up to `n`. */
  no_answer?: number;
  /** Answers are sets of options: an item counts once per option ticked. */
  several?: boolean;
}

/** GET /report/status: how far the analysis report of the data as it is now got. */
export interface ReportStatus {
  state: 'running' | 'ready' | 'failed';
  step: string;
  done: number;
  total: number;
  error: string | null;
  /** Whether it is the report of the data as it is now (else a newer one follows). */
  current: boolean;
}

export interface Results {
  questions: QuestionResult[];
  downloads: Array<{ label: string; url: string }>;
}

export interface ActionResult {
  ok?: boolean;
  message?: string;
  [key: string]: unknown;
}

/** An LLM judge of the task (docs/judges.md): its progress and what it cost. */
export interface JudgeSummary {
  judge: string;
  units_answered: number;
  units_open: number;
  calls: number;
  invalid_replies: number;
  failed_calls: number;
  input_tokens: number | null;
  output_tokens: number | null;
  cost: number | null;
  settings: Record<string, unknown>;
  prompt_sha256: string;
  last_call_at: string;
}

export interface JudgeFailure {
  dialogue_key: string;
  bucket: string;
  outcome: 'invalid' | 'failed' | string;
  reason: string | null;
  at: string;
}

/** A judge's answers about the same dialogues as a person's unit. */
export interface UnitJudge {
  judge: string;
  unit_id: string;
  status: string;
  answers: Record<string, unknown> | null;
  submitted_at: string | null;
  summary: Record<string, unknown> | null;
  failures: JudgeFailure[];
}

/** `GET /api/requester/arena` (docs/arena.md). */
export interface ArenaLeaderboard {
  battles: number;
  ranking: {
    bot: string;
    rank: number;
    rank_ci_low: number | null;
    rank_ci_high: number | null;
    elo: number | null;
    elo_ci_low: number | null;
    elo_ci_high: number | null;
    battles: number;
    win_rate: number;
  }[];
  pairs: {
    bot_a: string;
    bot_b: string;
    battles: number;
    wins_a: number;
    wins_b: number;
    ties: number;
    bothbad: number;
    win_rate_a: number;
  }[];
  position_bias: { decisive: number; model_a_share: number | null; ci_low: number | null; ci_high: number | null } | null;
  outlier_voters: { judge: string; decisive_votes: number; against: number; expected_against: number }[];
}

export interface ArenaResults {
  resamples: number;
  leaderboard: ArenaLeaderboard | null;
}
