import { z } from 'zod';
import { defineTaskTool } from '../../runner/tool.js';
import type { Preflight, PreflightOutcome, PreflightQuestion } from '../../server/preflight.js';

/**
 * The conformance suite's input fixtures: tools that need answers before they run, as preflights
 * (SEP-2322 MRTR on 2026-07-28: `input_required` results with `requestState`; on 2025-era sessions
 * the same preflights become server-to-client requests). Each preflight passes its answers on in
 * `args.answers`, which the handler words. Never tasks.
 */

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

type Answers = Record<string, unknown>;

/** Tools whose arguments carry the preflight's answers next to the caller's own. */
function inputTool(name: string, description: string, word: (answers: Answers, args: Answers) => string) {
  return defineTaskTool({
    name,
    description,
    inputSchema: z.looseObject({}),
    taskSupport: 'forbidden',
    handler: async (args) => {
      const answers = (args as { answers?: Answers }).answers ?? {};
      return text(word(answers, args));
    },
  });
}

const form = (message: string, requestedSchema: Record<string, unknown>): PreflightQuestion => ({
  message,
  requestedSchema,
});
const ask = (questions: Record<string, PreflightQuestion>, state?: unknown): PreflightOutcome =>
  state === undefined ? { kind: 'ask', questions } : { kind: 'ask', questions, state };
const proceed = (args: Answers, answers: Answers): PreflightOutcome => ({
  kind: 'proceed',
  args: { ...args, answers },
});

const nameSchema = { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] };
const nameForm = form('What is your name?', nameSchema);
const capital: PreflightQuestion = {
  kind: 'sampling',
  params: {
    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
    maxTokens: 100,
  },
};
const greeting: PreflightQuestion = {
  kind: 'sampling',
  params: { messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }], maxTokens: 50 },
};
const roots: PreflightQuestion = { kind: 'roots' };

/** The text of a sampling answer, else undefined. */
function sampled(call: Parameters<Preflight>[0], key: string): string | undefined {
  const answer = call.answer(key);
  if (answer?.kind !== 'sampling') return undefined;
  const content = answer.result.content as { type?: unknown; text?: unknown } | undefined;
  return typeof content?.text === 'string' ? content.text : '';
}

function rootList(call: Parameters<Preflight>[0], key: string): string[] | undefined {
  const answer = call.answer(key);
  return answer?.kind === 'roots' ? answer.roots.map((r) => r.uri) : undefined;
}

/** The name asked as `user_name`; a declined or cancelled form proceeds without one. */
function nameOrAsk(call: Parameters<Preflight>[0]): PreflightOutcome {
  const answer = call.answer('user_name');
  if (answer?.kind === 'form' && answer.action !== 'accept') return proceed(call.args, { name: 'stranger' });
  const name = call.accepted('user_name')?.name;
  return typeof name === 'string' ? proceed(call.args, { name }) : ask({ user_name: nameForm });
}

export const inputPreflights: Readonly<Record<string, Preflight>> = {
  // A missing or unreadable answer is asked again (SEP-2322); a decline or cancel is an answer.
  test_input_required_result_elicitation: (call) => nameOrAsk(call),
  test_input_required_result_sampling: (call) => {
    const said = sampled(call, 'capital_question');
    return said === undefined ? ask({ capital_question: capital }) : proceed(call.args, { said });
  },
  test_input_required_result_list_roots: (call) => {
    const uris = rootList(call, 'client_roots');
    return uris === undefined ? ask({ client_roots: roots }) : proceed(call.args, { roots: uris });
  },
  test_input_required_result_request_state: (call) => {
    const ok = call.accepted('confirm')?.ok;
    if (call.state === 'confirm' && typeof ok === 'boolean') return proceed(call.args, { ok, state: 'state-ok' });
    const confirm = form('Please confirm', {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    return ask({ confirm }, 'confirm');
  },
  test_input_required_result_multiple_inputs: (call) => {
    const name = call.accepted('user_name')?.name;
    const said = sampled(call, 'greeting');
    const uris = rootList(call, 'client_roots');
    if (call.state === 'all' && typeof name === 'string' && said !== undefined && uris !== undefined) {
      return proceed(call.args, { name, said, roots: uris });
    }
    return ask({ user_name: nameForm, greeting, client_roots: roots }, 'all');
  },
  test_input_required_result_multi_round: (call) => {
    const state = call.state as { step?: number; name?: string } | undefined;
    const color = call.accepted('step2')?.color;
    if (state?.step === 2 && typeof color === 'string') return proceed(call.args, { name: state.name, color });
    const name = call.accepted('step1')?.name;
    if (state?.step === 1 && typeof name === 'string') {
      const step2 = form('Step 2: What is your favorite color?', {
        type: 'object',
        properties: { color: { type: 'string' } },
        required: ['color'],
      });
      return ask({ step2 }, { step: 2, name });
    }
    return ask({ step1: form('Step 1: What is your name?', nameSchema) }, { step: 1 });
  },
  test_input_required_result_tampered_state: (call) => {
    const ok = call.accepted('confirm')?.ok;
    if (call.state === 'signed' && typeof ok === 'boolean') return proceed(call.args, { ok });
    const confirm = form('Please confirm', {
      type: 'object',
      properties: { ok: { type: 'boolean' } },
      required: ['ok'],
    });
    return ask({ confirm }, 'signed');
  },
  // Asks only what the request's client capabilities offer (SEP-2322's capability rule).
  test_input_required_result_capabilities: (call) => {
    const name = call.accepted('user_name')?.name;
    const said = sampled(call, 'greeting');
    if (name !== undefined || said !== undefined) return proceed(call.args, { name, said });
    const questions: Record<string, PreflightQuestion> = {};
    if (call.canAsk.form) questions.user_name = nameForm;
    if (call.canAsk.sampling) questions.greeting = greeting;
    return Object.keys(questions).length > 0 ? ask(questions) : proceed(call.args, {});
  },
  // Needs sampling whatever the caller declared: without it the call is refused with -32021.
  test_missing_capability: (call) => {
    const said = sampled(call, 'greeting');
    return said === undefined ? ask({ greeting }) : proceed(call.args, { said });
  },
  test_streaming_elicitation: (call) => nameOrAsk(call),
  // The 2025-era scenarios (push-style requests during the call).
  test_sampling: (call) => {
    const said = sampled(call, 'reply');
    const prompt = typeof call.args.prompt === 'string' ? call.args.prompt : '';
    const params = { messages: [{ role: 'user', content: { type: 'text', text: prompt } }], maxTokens: 100 };
    return said === undefined ? ask({ reply: { kind: 'sampling', params } }) : proceed(call.args, { said });
  },
  test_elicitation: (call) => {
    const answer = call.answer('user');
    if (answer?.kind === 'form') return proceed(call.args, { action: answer.action, content: answer.content ?? {} });
    const message = typeof call.args.message === 'string' ? call.args.message : 'Please provide your information';
    return ask({ user: form(message, userSchema) });
  },
  test_elicitation_sep1034_defaults: (call) => {
    const answer = call.answer('defaults');
    if (answer?.kind === 'form') return proceed(call.args, { action: answer.action, content: answer.content ?? {} });
    return ask({ defaults: form('Please review and update the form fields with defaults', defaultsSchema) });
  },
  test_elicitation_sep1330_enums: (call) => {
    const answer = call.answer('enums');
    if (answer?.kind === 'form') return proceed(call.args, { action: answer.action, content: answer.content ?? {} });
    return ask({ enums: form('Please select options from the enum fields', enumsSchema) });
  },
};

const userSchema = {
  type: 'object',
  properties: {
    username: { type: 'string', description: "User's response" },
    email: { type: 'string', description: "User's email address" },
  },
  required: ['username', 'email'],
};

const defaultsSchema = {
  type: 'object',
  properties: {
    name: { type: 'string', description: 'User name', default: 'John Doe' },
    age: { type: 'integer', description: 'User age', default: 30 },
    score: { type: 'number', description: 'User score', default: 95.5 },
    status: { type: 'string', description: 'User status', enum: ['active', 'inactive', 'pending'], default: 'active' },
    verified: { type: 'boolean', description: 'Verification status', default: true },
  },
  required: [],
};

const choices = (prefix: string, word: string) =>
  ['First', 'Second', 'Third'].map((ordinal, i) => ({ const: `${prefix}${i + 1}`, title: `${ordinal} ${word}` }));

const enumsSchema = {
  type: 'object',
  properties: {
    untitledSingle: { type: 'string', description: 'Select one option', enum: ['option1', 'option2', 'option3'] },
    titledSingle: { type: 'string', description: 'Select one option with titles', oneOf: choices('value', 'Option') },
    legacyEnum: {
      type: 'string',
      description: 'Select one option (legacy)',
      enum: ['opt1', 'opt2', 'opt3'],
      enumNames: ['Option One', 'Option Two', 'Option Three'],
    },
    untitledMulti: {
      type: 'array',
      description: 'Select multiple options',
      minItems: 1,
      maxItems: 3,
      items: { type: 'string', enum: ['option1', 'option2', 'option3'] },
    },
    titledMulti: {
      type: 'array',
      description: 'Select multiple options with titles',
      minItems: 1,
      maxItems: 3,
      items: { anyOf: choices('value', 'Choice') },
    },
  },
  required: [],
};

const completed = (answers: Answers) =>
  `Elicitation completed: action=${String(answers.action)}, content=${JSON.stringify(answers.content ?? {})}`;

export const inputTools = [
  inputTool(
    'test_input_required_result_elicitation',
    'Asks a name first (MRTR), then greets it.',
    (a) => `Hello, ${String(a.name)}!`,
  ),
  inputTool(
    'test_input_required_result_sampling',
    'Asks the client model first (MRTR).',
    (a) => `LLM said: ${String(a.said)}`,
  ),
  inputTool(
    'test_input_required_result_list_roots',
    'Asks the client roots first (MRTR).',
    (a) => `Roots: ${(a.roots as string[]).join(', ')}`,
  ),
  inputTool(
    'test_input_required_result_request_state',
    'Asks a confirmation with state (MRTR).',
    (a) => `${String(a.state)}: ok=${String(a.ok)}`,
  ),
  inputTool(
    'test_input_required_result_multiple_inputs',
    'Asks a form, the model and the roots at once.',
    (a) => `Hello ${String(a.name)}; ${String(a.said)}; roots ${String(a.roots)}`,
  ),
  inputTool(
    'test_input_required_result_multi_round',
    'Asks two rounds, carrying the first answer in the state.',
    (a) => `${String(a.name)} likes ${String(a.color)}`,
  ),
  inputTool(
    'test_input_required_result_tampered_state',
    'Asks with signed state; a tampered state is refused.',
    (a) => `confirmed: ${String(a.ok)}`,
  ),
  inputTool(
    'test_input_required_result_capabilities',
    'Asks only what the caller declared it can answer.',
    (a) => `name ${String(a.name)}, said ${String(a.said)}`,
  ),
  inputTool(
    'test_missing_capability',
    'Needs sampling: refused (-32021) when the caller did not declare it.',
    (a) => `said ${String(a.said)}`,
  ),
  inputTool(
    'test_streaming_elicitation',
    'Asks a name as an input_required result, never a request on the stream.',
    (a) => `Hello, ${String(a.name)}!`,
  ),
  inputTool('test_sampling', 'Asks the client model to answer `prompt`.', (a) => `LLM response: ${String(a.said)}`),
  inputTool(
    'test_elicitation',
    'Asks the user for a username and an email.',
    (a) => `User response: action=${String(a.action)}, content=${JSON.stringify(a.content)}`,
  ),
  inputTool('test_elicitation_sep1034_defaults', 'Asks a form whose fields have defaults (SEP-1034).', completed),
  inputTool('test_elicitation_sep1330_enums', 'Asks a form with every enum shape (SEP-1330).', completed),
] as const;
