import { INVALID_PARAMS_REASONS, MAX_SUBMISSION_KEY_LENGTH, SUBMISSION_KEY_META, WEBHOOK_META } from './constants.js';
import { invalidParams, taskNotFoundError } from './errors.js';
import { isRecord } from '../../../core/json.js';

/**
 * Decoding: wire params -> engine command inputs. Pure, changes nothing; every bad parameter is a
 * `-32602` with a message naming it and a `data.reason`. The SDK has already validated the JSON-RPC
 * envelope and lifted `_meta` envelope keys, `inputResponses` and `requestState` out of `params`.
 */

/** Ids longer than this cannot be ours (ours are 22 characters); answered as "not found" unread. */
const MAX_TASK_ID_LENGTH = 256;

export interface TaskRef {
  readonly taskId: string;
}

export interface ToolCallInput {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly submissionKey: string | undefined;
  /** `_meta["mcp-terminus.dev/webhook"]` as sent; the engine decodes and checks it. */
  readonly webhook?: unknown;
}

export interface UpdateInput extends TaskRef {
  readonly responses: Readonly<Record<string, unknown>>;
}

export interface LookupInput {
  readonly submissionKey: string;
}

function paramsObject(params: unknown): Record<string, unknown> {
  if (params === undefined) return {};
  if (!isRecord(params)) throw invalidParams('params must be an object');
  return params;
}

/**
 * `{ taskId }` of `tasks/get|update|cancel`. A missing or non-string `taskId` is a parameter error; a
 * string that cannot be an id gets the same "not found" as an unknown id (S8), so the two cannot be
 * told apart.
 */
export function decodeTaskRef(params: unknown): TaskRef {
  const { taskId } = paramsObject(params);
  if (taskId === undefined) throw invalidParams('taskId is required');
  if (typeof taskId !== 'string') throw invalidParams('taskId must be a string');
  if (taskId.length === 0 || taskId.length > MAX_TASK_ID_LENGTH) throw taskNotFoundError();
  return { taskId };
}

/** `tasks/update`: the id plus the responses the SDK lifted into `ctx.mcpReq.inputResponses`. */
export function decodeUpdate(params: unknown, inputResponses: Record<string, unknown> | undefined): UpdateInput {
  const ref = decodeTaskRef(params);
  return { taskId: ref.taskId, responses: inputResponses ?? {} };
}

function decodeSubmissionKey(value: unknown, where: string): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw invalidParams(`${where} must be a non-empty string`);
  }
  if (value.length > MAX_SUBMISSION_KEY_LENGTH) {
    throw invalidParams(`${where} is longer than ${MAX_SUBMISSION_KEY_LENGTH} characters`);
  }
  return value;
}

/**
 * `tools/call` params: `{ name, arguments?, _meta? }`. The submission key, when present, is
 * `_meta["mcp-terminus.dev/submissionKey"]`. Tool existence is checked by the caller, which holds the
 * tool table.
 */
export function decodeToolCall(params: unknown): ToolCallInput {
  const p = paramsObject(params);
  if (typeof p.name !== 'string' || p.name.length === 0) throw invalidParams('name must be a non-empty string');
  const args = p.arguments ?? {};
  if (!isRecord(args)) {
    throw invalidParams('arguments must be an object', INVALID_PARAMS_REASONS.invalidArguments);
  }
  const meta = p._meta;
  const rawKey = isRecord(meta) ? meta[SUBMISSION_KEY_META] : undefined;
  const submissionKey =
    rawKey === undefined ? undefined : decodeSubmissionKey(rawKey, `_meta["${SUBMISSION_KEY_META}"]`);
  const webhook = isRecord(meta) ? meta[WEBHOOK_META] : undefined;
  return { tool: p.name, args, submissionKey, ...(webhook === undefined ? {} : { webhook }) };
}

/** `terminus/tasks/lookup` params: `{ submissionKey }`. */
export function decodeLookup(params: unknown): LookupInput {
  const { submissionKey } = paramsObject(params);
  if (submissionKey === undefined) throw invalidParams('submissionKey is required');
  return { submissionKey: decodeSubmissionKey(submissionKey, 'submissionKey') };
}

/**
 * Checks the answers to outstanding `elicitation/create` requests before they are stored: a reply
 * the handler could not read would otherwise end the task as a tool error. Keys that are not
 * outstanding are left alone (they are ignored downstream, X-34).
 */
export function checkResponses(
  responses: Readonly<Record<string, unknown>>,
  outstanding: Readonly<Record<string, { readonly method: string }>>,
): void {
  for (const [key, value] of Object.entries(responses)) {
    if (outstanding[key]?.method !== 'elicitation/create') continue;
    const reply = isRecord(value) ? value : undefined;
    const action = reply?.action;
    const validAction = action === 'accept' || action === 'decline' || action === 'cancel';
    if (!validAction || (reply?.content !== undefined && !isRecord(reply.content))) {
      throw invalidParams(
        `inputResponses["${key}"] must be an ElicitResult: { action: "accept" | "decline" | "cancel", content?: object }`,
      );
    }
  }
}
