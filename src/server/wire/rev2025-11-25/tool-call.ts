import { ProtocolError, type JSONRPCRequest, type Server, type ServerContext } from '@modelcontextprotocol/server';
import { decodeCallWebhook } from '../../../runner/webhooks.js';
import type { FastContext, FastMethod } from '../../http/fast-path.js';
import { runToolInline } from '../../inline.js';
import { ownerOf, type OwnerFacts } from '../../owner.js';
import {
  answerOf,
  capabilitiesOf,
  missingCapabilities,
  type Preflight,
  type PreflightAnswer,
  type PreflightQuestion,
} from '../../preflight.js';
import type { WireDeps } from '../adapter.js';
import { WEBHOOK_META } from '../tasks-ext/constants.js';
import { REASONS } from './constants.js';
import { decodeToolCall, isRecord, type LegacyToolCall } from './decode.js';
import { encodeCreateTaskResult, relatedTask } from './encode.js';
import { invalidParams, taskForbiddenError, taskRequiredError, toProtocolError } from './errors.js';
import { sessionOf } from './session-hooks.js';

/** More rounds than any real preflight needs; bounds a preflight that never proceeds. */
const MAX_PREFLIGHT_ROUNDS = 8;

/**
 * `tools/call` on the 2025 era (reference 1.3, 1.4). The client decides per call with `params.task`:
 * - with `task`: `forbidden` tools get `-32601` (T-10), others become a durable task and the answer
 *   is `CreateTaskResult` `{ task }` sent after the commit (T-15, T-16, S1);
 * - without: `required` tools get `-32601` (T-13), others run inline as a plain call.
 * Served from the SDK's `fallbackRequestHandler`: a registered handler's result validation rejects
 * the nested `{ task }` (reference 5.7).
 */
export async function callToolLegacy(
  request: JSONRPCRequest,
  ctx: ServerContext,
  server: Server,
  deps: WireDeps,
): Promise<Record<string, unknown>> {
  const call = decodeToolCall(request.params);
  const tool = deps.engine.tools.get(call.tool);
  if (tool === undefined) throw invalidParams(`Unknown tool: ${call.tool}`, REASONS.unknownTool, { tool: call.tool });
  const support = tool.taskSupport ?? 'optional';
  if (call.task === undefined && support === 'required') throw taskRequiredError(tool.name);
  if (call.task !== undefined && support === 'forbidden') throw taskForbiddenError(tool.name);
  if (call.webhook !== undefined && call.task === undefined) {
    throw invalidParams(`_meta["${WEBHOOK_META}"] needs a task: send params.task with it`);
  }

  const preflight = deps.preflights.get(tool.name);
  const args = preflight === undefined ? call.args : await runPreflight(preflight, tool.name, call.args, ctx, server);
  try {
    if (call.task === undefined) return await runToolInline(deps.engine, tool, args, ctx);
    return await createTask(deps, ctx, server, call, args, call.task);
  } catch (error) {
    throw toProtocolError(error);
  }
}

/** The task branch of `tools/call`, the same for the SDK and the fast path. */
async function createTask(
  deps: WireDeps,
  ctx: OwnerFacts,
  server: Server | undefined,
  call: LegacyToolCall,
  args: Record<string, unknown>,
  task: NonNullable<LegacyToolCall['task']>,
): Promise<Record<string, unknown>> {
  const { task: created } = await deps.engine.submit({
    owner: ownerOf(ctx, deps.transport),
    tool: call.tool,
    args,
    wire: 'mcp-2025-11-25',
    ...(task.ttlMs === undefined ? {} : { ttlMs: task.ttlMs }),
    ...(call.webhook === undefined ? {} : { webhook: decodeCallWebhook(call.webhook) }),
  });
  // T-42: progress of the task is a message related to it, so it carries the related-task `_meta`.
  const followed = server === undefined ? undefined : sessionOf(server);
  followed?.taskCreated(created, call.progressToken, { progressParams: { _meta: relatedTask(created.id) } });
  return { ...encodeCreateTaskResult(created) };
}

/**
 * `tools/call` for the fast path on a 2025-11-25 connection (an HTTP session, stdio): it takes only
 * a task-augmented call (`task` an object) of a task tool of the engine that is not `forbidden`
 * and has no preflight, with `arguments` an object or absent, and runs it through the same
 * decode -> `createTask` (the session follows the task as on the SDK path); every other call goes
 * to the SDK. Only offered when every tool extension leaves task-augmented calls to this wire
 * (`LegacyToolExtension.leavesTaskCalls`), since an extension sees each call first.
 */
export function legacyFastToolCall(deps: WireDeps): FastMethod {
  const run = async (params: Record<string, unknown>, ctx: FastContext): Promise<Record<string, unknown>> => {
    const call = decodeToolCall(params);
    if (call.task === undefined) throw new ProtocolError(-32603, 'not a task-augmented call');
    try {
      return await createTask(deps, ctx, ctx.server, call, call.args, call.task);
    } catch (error) {
      throw toProtocolError(error);
    }
  };
  const takes = (params: Record<string, unknown>): boolean => {
    if (!isRecord(params.task)) return false;
    const tool = typeof params.name === 'string' ? deps.engine.tools.get(params.name) : undefined;
    if (tool === undefined || (tool.taskSupport ?? 'optional') === 'forbidden') return false;
    if (params.arguments !== undefined && !isRecord(params.arguments)) return false;
    return !deps.preflights.has(tool.name);
  };
  return Object.assign(run, { takes });
}

/**
 * A preflight's questions, asked the 2025 way: each one a server-to-client request on this call's
 * own stream (`elicitation/create`, `sampling/createMessage`, `roots/list`), then the preflight runs
 * again with every answer so far and the state it gave. Needs a session (or stdio) and the client
 * capability of each kind asked; otherwise `-32600` (`input_unavailable`, naming the capabilities).
 * A form declined or cancelled and asked again is `-32600` (`input_declined`).
 */
async function runPreflight(
  preflight: Preflight,
  tool: string,
  initial: Record<string, unknown>,
  ctx: ServerContext,
  server: Server,
): Promise<Record<string, unknown>> {
  const canAsk = capabilitiesOf(server.getClientCapabilities());
  const answers = new Map<string, PreflightAnswer>();
  let state: unknown;
  for (let round = 0; round < MAX_PREFLIGHT_ROUNDS; round++) {
    const outcome = preflight({
      tool,
      args: initial,
      accepted: (key) => {
        const answer = answers.get(key);
        return answer?.kind === 'form' && answer.action === 'accept' ? answer.content : undefined;
      },
      answer: (key) => answers.get(key),
      state,
      canAsk,
    });
    if (outcome.kind === 'proceed') return outcome.args;
    state = outcome.state;
    const missing = missingCapabilities(outcome.questions, canAsk);
    if (Object.keys(missing).length > 0) {
      throw new ProtocolError(-32600, `Tool ${tool} needs input first and this client cannot give it`, {
        reason: 'input_unavailable',
        requiredCapabilities: missing,
      });
    }
    for (const [key, question] of Object.entries(outcome.questions)) {
      const prior = answers.get(key);
      if (prior?.kind === 'form' && prior.action !== 'accept') {
        throw new ProtocolError(-32600, `Tool ${tool} needs input that was not given (${prior.action})`, {
          reason: 'input_declined',
        });
      }
      answers.set(key, await ask(tool, question, ctx));
    }
  }
  throw new ProtocolError(-32603, `Preflight of ${tool} did not settle`);
}

/** One question as a server-to-client request; a transport that cannot carry it is `input_unavailable`. */
async function ask(tool: string, question: PreflightQuestion, ctx: ServerContext): Promise<PreflightAnswer> {
  let raw: unknown;
  try {
    if (question.kind === 'sampling') {
      raw = await ctx.mcpReq.requestSampling(question.params as Parameters<typeof ctx.mcpReq.requestSampling>[0]);
    } else if (question.kind === 'roots') {
      raw = await ctx.mcpReq.send({ method: 'roots/list' });
    } else {
      raw = await ctx.mcpReq.elicitInput({
        message: question.message,
        requestedSchema: question.requestedSchema as never,
      });
    }
  } catch (error) {
    throw new ProtocolError(-32600, `Tool ${tool} needs input first and this connection cannot ask for it`, {
      reason: 'input_unavailable',
      cause: String(error),
    });
  }
  const answer = answerOf(raw);
  if (answer === undefined) {
    throw new ProtocolError(-32600, `Tool ${tool} got an answer it cannot read`, { reason: 'input_unavailable' });
  }
  return answer;
}
