/** Chat units and server states for the chat tests (docs/chat-api.md). */
import { makeSampleUnit } from '../dev/sampleUnit';
import type { Bucket, ChatMessage, ChatState, Conversation, Unit } from '../src/types';

export function conversation(position: number, partner: string, overrides: Partial<Conversation> = {}): Conversation {
  return {
    position,
    partner,
    status: 'pending',
    turns_done: 0,
    can_end: false,
    respond_by: null,
    reply: null,
    error: null,
    messages: [],
    ...overrides,
  };
}

export function msg(index: number, role: ChatMessage['role'], text: string): ChatMessage {
  return { index, role, text, sent_at: '2026-11-22T23:50:00Z' };
}

export function chatState(overrides: Partial<ChatState> = {}): ChatState {
  return {
    num_turns: 2,
    max_resp_time: 600,
    max_message_chars: 200,
    conversation_start_mode: 'hi',
    current: 0,
    conversations: [conversation(0, 'Partner')],
    ...overrides,
  };
}

/** Two bots one after the other. */
export function pairedState(overrides: Partial<ChatState> = {}): ChatState {
  return chatState({ conversations: [conversation(0, 'Partner A'), conversation(1, 'Partner B')], ...overrides });
}

/** A chat after `start`: the opener sent, the bot's first answer in, the worker to write. */
export function activeConversation(position: number, partner: string, overrides: Partial<Conversation> = {}): Conversation {
  return conversation(position, partner, {
    status: 'active',
    respond_by: new Date(Date.now() + 600_000).toISOString(),
    messages: [msg(0, 'worker', 'Hi!'), msg(1, 'bot', 'Hello! How are you?')],
    ...overrides,
  });
}

export function chatUnit(chat: ChatState): Unit {
  const base = makeSampleUnit();
  return {
    ...base,
    unit_id: 'u_c',
    kind: 'chat',
    task: { title: 'Chat with a bot', description_html: '' },
    seconds_remaining: null,
    dialogues: [],
    buckets: {},
    chat,
  };
}

/**
 * Buckets as the server sends them, copied from the repository's
 * collection_and_annotations/task_config/annotation_buckets.json.
 */
export const CHAT_BUCKETS: Record<string, Bucket> = {
  turn_quality: {
    config: 'likert-5-turn',
    level: 'turn',
    task_title: 'turn_quality',
    question: null,
    options: [{ label: 'Quality', question: 'How good is this reply, from 1 (poor) to 5 (excellent)?' }],
    label_details: { '1': 'confusing or off topic', '5': 'natural and helpful' },
    require: { level: 'turn' },
    instructions_html: '<p>Rate each reply of SPEAKER_X.</p>',
    targets: {},
  },
  relevance: {
    config: 'nondetails_nonhelp_button_flow',
    level: 'turn',
    task_title: 'relevance',
    options: {
      "Does SPEAKER_X's reply follow from what SPEAKER_Y just said?": {
        'Yes, it responds to it directly.': {},
        'Partly, it responds but drifts away.': {
          'Where does it drift?': {
            'To a new topic that still fits the conversation.': {},
            'To something unrelated.': {},
          },
        },
        'No, it ignores what SPEAKER_Y said.': {},
      },
      'Which problems does the reply have?': {
        _type_: { checkbox: {} },
        'It repeats an earlier reply.': {},
        'It contradicts something said before.': {},
        'It is hard to understand.': {},
      },
    },
    label_details: null,
    require: { level: 'turn' },
    instructions_html: null,
    targets: {},
  },
  issues: {
    config: 'multiselect',
    level: 'turn',
    task_title: 'issues',
    question: 'Select every label that applies to this reply:',
    options: [
      { value: 'off_topic', label: 'Off topic' },
      { value: 'repetitive', label: 'Repeats itself' },
      { value: 'factual_error', label: 'States something false' },
      { value: 'asks_question', label: 'Asks a question back', speaker: 'system' },
    ],
    label_details: null,
    require: null,
    instructions_html: null,
    targets: {},
  },
  overall_quality: {
    config: 'likert-5-dialogue',
    level: 'dialogue',
    task_title: 'overall_quality',
    options: [{ label: 'Overall', question: 'Overall, how good a conversation partner was SPEAKER_X?' }],
    label_details: { '1': 'I would not talk to it again', '5': 'as good as a thoughtful person' },
    require: { level: 'dialogue' },
    instructions_html: '<p>Think of the whole conversation.</p>',
    targets: {},
  },
  preference: {
    config: 'comparative',
    level: 'dialogue',
    task_title: 'preference',
    question: 'In which conversation was SPEAKER_X the better partner?',
    options: ['Dialogue 1 (left)', 'Dialogue 2 (right)', 'No real difference'],
    label_details: null,
    require: { level: 'dialogue' },
    instructions_html: null,
    targets: {},
  },
};

/** A chat unit with annotations: the buckets, the names the server gives, and a draft. */
export function annotatedUnit(chat: ChatState, draft: Unit['draft'] = null): Unit {
  return { ...chatUnit(chat), buckets: CHAT_BUCKETS, speaker_names: { user: 'You', system: 'Partner' }, draft };
}
