/**
 * A small hand-written unit covering every bucket config. Used by the dev mock API and by the
 * component tests. (Written for this project; not taken from any data set.)
 */
import type { Unit } from '../src/types';

export const SAMPLE_TURNS = [
  { index: 0, speaker: 'user', text: 'Hello there! I just got back from a hiking trip.' },
  { index: 1, speaker: 'system', text: 'Welcome back! Where did you go hiking?' },
  { index: 2, speaker: 'user', text: 'In the mountains up north. It rained the whole time.' },
  { index: 3, speaker: 'system', text: 'Rain can make a trail slippery. Mount Everest is 8,849 metres tall.' },
  { index: 4, speaker: 'user', text: 'Ha, that is a bit higher than where I was.' },
  { index: 5, speaker: 'system', text: 'Do you plan to go again next month?' },
];

export const SAMPLE_TURNS2 = [
  { index: 0, speaker: 'user', text: 'Hi, can you recommend a book?' },
  { index: 1, speaker: 'system', text: 'Sure. Do you like mysteries or science fiction?' },
  { index: 2, speaker: 'user', text: 'Science fiction, please.' },
  { index: 3, speaker: 'system', text: 'Then a classic space opera could be a good start.' },
];

export function makeSampleUnit(overrides: Partial<Unit> = {}): Unit {
  return {
    unit_id: 'u_sample',
    status: 'assigned',
    task: {
      title: 'Rate chatbot conversations',
      description_html:
        '<p>You will read short conversations between a person and a chatbot (<b>SPEAKER_X</b>) and answer questions about them.</p>',
    },
    speaker_names: { system: 'Bot', user: 'Partner' },
    kind: 'annotation',
    seconds_remaining: 3600,
    dialogues: [
      {
        key: 'd_one',
        turns: SAMPLE_TURNS,
        turns2: null,
        persona: ['I like walking in nature.', 'I have a dog called Pepper.'],
        annotation_tasks: [
          'relevance',
          'facts',
          'flags',
          'labels',
          'fluency_turn',
          'aspects',
          'overall',
          'dialogue_aspects',
        ],
      },
      {
        key: 'd_two',
        turns: SAMPLE_TURNS,
        turns2: SAMPLE_TURNS2,
        persona: null,
        annotation_tasks: ['which_better'],
      },
    ],
    buckets: {
      relevance: {
        config: 'button_flow',
        level: 'turn',
        task_title: 'relevance',
        options: {
          "Is SPEAKER_X's response relevant to what SPEAKER_Y said?": {
            'Yes, it follows on naturally.': {},
            'No, it is off the point.': {
              'What is wrong with it?': {
                'It changes the topic abruptly.': {},
                'It ignores what SPEAKER_Y said.': {},
              },
            },
          },
          'Does the response ask SPEAKER_Y a question?': {
            'Yes.': {},
            'No.': {},
          },
        },
        label_details: null,
        require: { level: 'turn' },
        instructions_html: '<p>A relevant response follows on from what <i>SPEAKER_Y</i> just said.</p>',
        targets: { d_one: [1, 3, 5] },
      },
      facts: {
        config: 'nondetails_button_flow',
        level: 'turn',
        task_title: 'facts',
        options: {
          'Does the response use facts?': {
            _type_: { checkbox: {} },
            'It states at least one fact.': {
              'Are all the facts correct?': {
                'Yes.': {},
                'No, at least one is wrong.': {},
              },
            },
          },
          'Does the response contain a question?': {
            'Yes.': {},
            'No.': {},
          },
          'Is the question easy to answer?': {
            _dep_: { answered: { question: 'Does the response contain a question?', answer: 'Yes.' } },
            'Yes.': {},
            'No.': {},
          },
        },
        label_details: null,
        require: { level: 'turn' },
        instructions_html: '<p>A fact is a statement that can be checked.</p>',
        targets: { d_one: [1, 3] },
      },
      flags: {
        config: 'nondetails_nonhelp_button_flow',
        level: 'turn',
        task_title: 'flags',
        options: {
          rude_q: { _type_: { checkbox: {} }, 'This response is rude.': {} },
          repeat_q: { _type_: { checkbox: {} }, 'This response repeats itself.': {} },
        },
        label_details: null,
        require: null,
        instructions_html: null,
        targets: { d_one: [1, 3, 5] },
      },
      labels: {
        config: 'multiselect',
        level: 'turn',
        task_title: 'labels',
        question: 'Tick every label that fits:',
        options: [
          { value: 'greets', label: 'Greets SPEAKER_Y' },
          { value: 'asks', label: 'Asks a question', speaker: 'system' },
          { value: 'off_topic', label: 'Goes off topic', speaker: 'user' },
        ],
        label_details: null,
        require: null,
        instructions_html: null,
        targets: { d_one: [0, 1, 2, 3] },
      },
      fluency_turn: {
        config: 'likert-5-turn',
        level: 'turn',
        task_title: 'fluency_turn',
        options: [{ label: 'Fluent', question: 'How fluent is this response?' }],
        label_details: { '1': 'hard to read', '5': 'perfectly fluent' },
        require: { level: 'turn' },
        instructions_html: null,
        targets: { d_one: [1, 3] },
      },
      aspects: {
        config: 'foreach-5-select',
        level: 'turn',
        task_title: 'aspects',
        question: 'How much does this reply show each quality? (1 = not at all, 5 = very much)',
        options: [
          { value: 'clear', label: 'Clear' },
          { value: 'kind', label: 'Kind' },
        ],
        label_details: null,
        require: { level: 'dialogue' },
        instructions_html: null,
        targets: { d_one: [1, 5] },
      },
      overall: {
        config: 'likert-5-dialogue',
        level: 'dialogue',
        task_title: 'overall',
        options: [
          { label: 'Engaging', question: "How engaging were SPEAKER_X's responses overall?" },
          { label: 'Quality', question: 'How good was the conversation overall?' },
        ],
        label_details: { '1': 'not at all', '5': 'very much so' },
        require: { level: 'dialogue' },
        instructions_html: null,
        targets: {},
      },
      dialogue_aspects: {
        config: 'foreach-5-select-dialogue',
        level: 'dialogue',
        task_title: 'dialogue_aspects',
        question: 'How much does the whole conversation show each quality? (1 = not at all, 5 = very much)',
        options: [
          { value: 'coherent', label: 'Coherent' },
          { value: 'friendly', label: 'Friendly' },
        ],
        label_details: null,
        require: null,
        instructions_html: null,
        targets: {},
      },
      which_better: {
        config: 'comparative',
        level: 'dialogue',
        task_title: 'which_better',
        question: "In which conversation was SPEAKER_X more helpful?",
        options: ['The left one', 'The right one', 'No difference'],
        label_details: null,
        require: { level: 'dialogue' },
        instructions_html: '<p>Compare the two conversations.</p>',
        targets: {},
      },
    },
    draft: null,
    completion_code: null,
    ...overrides,
  };
}
