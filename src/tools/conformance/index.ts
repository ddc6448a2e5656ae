import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTaskTool, ToolRpcError, type TaskToolDefinition } from '../../runner/tool.js';
import type { Preflight } from '../../server/preflight.js';
import { contentTools } from './content.js';
import { inputPreflights, inputTools } from './input.js';

/**
 * The fixture tools the official conformance suite (`@modelcontextprotocol/conformance`
 * 0.2.0-alpha.12) expects: the `tasks-*` scenarios' task tools with exactly the behaviour of
 * reference 4.3, the plain `tools-call-*` tools (content.ts) and the input fixtures of the MRTR,
 * elicitation and stateless scenarios (input.ts). Served by `terminus serve --fixtures conformance`.
 */

const text = (value: string) => ({ content: [{ type: 'text', text: value }] });

const greet = defineTaskTool({
  name: 'greet',
  description: 'Says hello. Always synchronous, never a task.',
  inputSchema: z.object({ name: z.string() }),
  taskSupport: 'forbidden',
  handler: async ({ name }) => text(`Hello, ${name}!`),
});

const slowCompute = defineTaskTool({
  name: 'slow_compute',
  description: 'Waits `seconds` (cancellable), then reports done. A task when the caller can take one.',
  inputSchema: z.object({ seconds: z.number().min(0).max(3600), label: z.string().optional() }),
  taskSupport: 'optional',
  pollIntervalMs: 200,
  handler: async ({ seconds, label }, ctx) => {
    await ctx.progress(0, seconds, 'computing');
    await sleep(seconds * 1000, undefined, { signal: ctx.signal });
    return text(`${label ?? 'slow_compute'}: done after ${seconds} s`);
  },
});

const failingJob = defineTaskTool({
  name: 'failing_job',
  description: 'A task whose tool call ends with isError: true (status completed, not failed).',
  inputSchema: z.object({}),
  taskSupport: 'required',
  pollIntervalMs: 200,
  handler: async (_args, ctx) => {
    await sleep(500, undefined, { signal: ctx.signal });
    return { content: [{ type: 'text', text: 'the job failed: simulated tool error' }], isError: true };
  },
});

const protocolErrorJob = defineTaskTool({
  name: 'protocol_error_job',
  description: 'A task that ends failed with a JSON-RPC error.',
  inputSchema: z.object({}),
  taskSupport: 'required',
  pollIntervalMs: 200,
  handler: async (_args, ctx) => {
    await sleep(300, undefined, { signal: ctx.signal });
    throw new ToolRpcError(-32603, 'simulated internal failure');
  },
});

const confirmSchema = {
  type: 'object',
  properties: { confirm: { type: 'boolean', description: 'Really delete?' } },
  required: ['confirm'],
};

const confirmDelete = defineTaskTool({
  name: 'confirm_delete',
  description: 'Asks for confirmation (input_required) before "deleting" a file.',
  inputSchema: z.object({ filename: z.string() }),
  taskSupport: 'required',
  pollIntervalMs: 200,
  handler: async ({ filename }, ctx) => {
    const reply = await ctx.requestInput(confirmSchema, `Delete ${filename}?`);
    const confirmed = reply.action === 'accept' && reply.content?.confirm === true;
    return text(confirmed ? `Deleted ${filename}` : `Kept ${filename}`);
  },
});

const nameConfirmSchema = {
  type: 'object',
  properties: { name: { type: 'string' }, confirm: { type: 'boolean' } },
};

const multiInput = defineTaskTool({
  name: 'multi_input',
  description: 'Asks two questions at once; completes when both are answered.',
  inputSchema: z.object({}),
  taskSupport: 'required',
  pollIntervalMs: 200,
  handler: async (_args, ctx) => {
    const [first, second] = await Promise.all([
      ctx.requestInput(nameConfirmSchema, 'First question: name and confirm'),
      ctx.requestInput(nameConfirmSchema, 'Second question: name and confirm'),
    ]);
    const names = [first, second].map((r) => (typeof r.content?.name === 'string' ? r.content.name : r.action));
    return text(`Answers: ${names.join(', ')}`);
  },
});

const testToolWithTask = defineTaskTool({
  name: 'test_tool_with_task',
  description: 'Asks for a name before the task exists (MRTR), then greets it from a task.',
  inputSchema: z.object({ name: z.string().optional() }),
  taskSupport: 'optional',
  pollIntervalMs: 200,
  handler: async ({ name }, ctx) => {
    await sleep(300, undefined, { signal: ctx.signal });
    return text(`Hello, ${name ?? 'stranger'}!`);
  },
});

/** The MRTR round of `test_tool_with_task`, answered before its task is created. */
const askNameFirst: Preflight = ({ args, accepted }) => {
  if (typeof args.name === 'string') return { kind: 'proceed', args };
  const answer = accepted('user_name');
  if (typeof answer?.name === 'string') return { kind: 'proceed', args: { ...args, name: answer.name } };
  return {
    kind: 'ask',
    questions: {
      user_name: {
        message: 'What is your name?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      },
    },
  };
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool keeps its own Args type
export const conformanceTools: readonly TaskToolDefinition<any>[] = [
  ...contentTools,
  greet,
  slowCompute,
  failingJob,
  protocolErrorJob,
  confirmDelete,
  multiInput,
  testToolWithTask,
  ...inputTools,
];

export const conformancePreflights: Readonly<Record<string, Preflight>> = {
  test_tool_with_task: askNameFirst,
  ...inputPreflights,
};
