import type { ServerContext } from '@modelcontextprotocol/server';
import { isRecord } from '../../../core/json.js';
import type { FastContext, FastMethod } from '../../http/fast-path.js';
import { runToolInline } from '../../inline.js';
import { ownerOf } from '../../owner.js';
import { checkParamHeaders, paramHeadersOf } from '../../param-headers.js';
import { inputSchemaOf } from '../../tools-list.js';
import type { WireDeps } from '../adapter.js';
import { INVALID_PARAMS_REASONS, SUBMISSION_KEY_META, TASKS_EXTENSION, WEBHOOK_META } from './constants.js';
import { decodeCallWebhook } from '../../../runner/webhooks.js';
import { decodeToolCall, type ToolCallInput } from './decode.js';
import { encodeCreateTaskResult } from './encode.js';
import { invalidParams, tasksCapabilityRequired, toProtocolError } from './errors.js';
import { declaresTasks } from './gate.js';
import { preflightRound } from './preflight.js';

/**
 * `tools/call` on the 2026-07-28 wire. The server decides per request (reference 1.1):
 * - `forbidden` tools always run inline;
 * - `optional` tools become a task when this request declares the extension, else run inline;
 * - `required` tools become a task, or get `-32021` when the request does not declare it.
 * Over HTTP, the `Mcp-Param-*` headers of the tool's `x-mcp-header` arguments are checked first
 * (SEP-2243). A preflight (MRTR) runs before any task exists. The task is created by `engine.submit`,
 * which resolves after the durable commit, and runs detached from this request.
 */
export async function callTool(params: unknown, ctx: ServerContext, deps: WireDeps): Promise<Record<string, unknown>> {
  const call = decodeToolCall(params);
  const tool = deps.engine.tools.get(call.tool);
  if (tool === undefined) {
    throw invalidParams(`Unknown tool: ${call.tool}`, INVALID_PARAMS_REASONS.unknownTool, { tool: call.tool });
  }
  const request = ctx.http?.req;
  if (request !== undefined) {
    const mismatch = checkParamHeaders(paramHeadersOf(inputSchemaOf(tool)), call.args, (name) =>
      request.headers.get(name),
    );
    if (mismatch !== undefined) throw mismatch;
  }
  const support = tool.taskSupport ?? 'optional';
  const declared = declaresTasks(ctx);
  if (support === 'required' && !declared) {
    throw tasksCapabilityRequired(
      `Tool ${tool.name} runs only as a task: declare the ${TASKS_EXTENSION} extension on the request`,
    );
  }
  const asTask = declared && support !== 'forbidden';
  if (call.submissionKey !== undefined && !asTask) {
    // Running inline would silently drop the caller's "never twice" guarantee (S5).
    throw invalidParams(
      support === 'forbidden'
        ? `Tool ${tool.name} never runs as a task, so _meta["${SUBMISSION_KEY_META}"] cannot apply`
        : `_meta["${SUBMISSION_KEY_META}"] needs a task: declare the ${TASKS_EXTENSION} extension on the request`,
      INVALID_PARAMS_REASONS.submissionKeyNeedsTask,
    );
  }

  if (call.webhook !== undefined && !asTask) {
    throw invalidParams(
      `_meta["${WEBHOOK_META}"] needs a task: the tool ${tool.name} does not run as one here`,
      INVALID_PARAMS_REASONS.invalidParams,
    );
  }

  let args = call.args;
  const preflight = deps.preflights.get(tool.name);
  if (preflight !== undefined) {
    const round = await preflightRound(preflight, tool.name, args, ctx, deps);
    if (round.kind === 'ask') return round.result;
    args = round.args;
  }

  try {
    if (!asTask) return await runToolInline(deps.engine, tool, args, ctx);
    return await createTask(deps, ctx, tool.name, args, call);
  } catch (error) {
    throw toProtocolError(error);
  }
}

/** The task branch of `tools/call`, the same for the SDK and the fast path. */
async function createTask(
  deps: WireDeps,
  ctx: FastContext | ServerContext,
  tool: string,
  args: Record<string, unknown>,
  call: Pick<ToolCallInput, 'submissionKey' | 'webhook'>,
): Promise<Record<string, unknown>> {
  const { created, task } = await deps.engine.submit({
    owner: ownerOf(ctx, deps.transport),
    tool,
    args,
    wire: 'mcp-tasks-ext',
    ...(call.submissionKey === undefined ? {} : { submissionKey: call.submissionKey }),
    ...(call.webhook === undefined ? {} : { webhook: decodeCallWebhook(call.webhook) }),
  });
  return encodeCreateTaskResult(task, created);
}

/**
 * `tools/call` for the fast path (`WireAdapter.fastMethods`): it takes only the calls `callTool`
 * turns into a task straight away (a task tool of the engine, the extension declared on the
 * request, no preflight, `arguments` an object or absent) and runs them through the same
 * decode -> `createTask` -> encode; every other call (inline, a preflight to ask, an unknown tool,
 * a shape the SDK's schema would refuse) is left to the SDK. Over HTTP the `Mcp-Param-*` headers
 * were checked before the fast path (`paramHeaderPrecheck`), as before the SDK.
 */
export function fastToolCall(deps: WireDeps): FastMethod {
  const run = async (params: Record<string, unknown>, ctx: FastContext): Promise<Record<string, unknown>> => {
    const call = decodeToolCall(params);
    try {
      return await createTask(deps, ctx, call.tool, call.args, call);
    } catch (error) {
      throw toProtocolError(error);
    }
  };
  const takes = (params: Record<string, unknown>, ctx: FastContext): boolean => {
    const tool = typeof params.name === 'string' ? deps.engine.tools.get(params.name) : undefined;
    if (tool === undefined || (tool.taskSupport ?? 'optional') === 'forbidden') return false;
    if (params.arguments !== undefined && !isRecord(params.arguments)) return false;
    return declaresTasks(ctx) && !deps.preflights.has(tool.name);
  };
  return Object.assign(run, { takes });
}
