import { MAX_TOKEN_LENGTH, REASONS } from './constants.js';
import { invalidParams, invalidToken } from './errors.js';
import { isRecord } from '../../../core/json.js';
import { WEBHOOK_META } from '../tasks-ext/constants.js';

/** Decoding: SEP-1391 params -> engine command inputs. Pure; bad parameters are `-32602`. */

export interface AsyncCall {
  readonly tool: string;
  readonly args: Record<string, unknown>;
  /** The client's token, which is also the submission (idempotency) key; undefined: server-made. */
  readonly token: string | undefined;
  /** Requested retention after completion, seconds (L-08). */
  readonly keepAliveS: number | undefined;
  readonly progressToken: string | number | undefined;
  /** `_meta["mcp-terminus.dev/webhook"]` as sent (as on the other MCP wires); the engine decodes and checks it. */
  readonly webhook?: unknown;
}

function paramsObject(params: unknown): Record<string, unknown> {
  if (params === undefined) return {};
  if (!isRecord(params)) throw invalidParams('params must be an object');
  return params;
}

/** Whether a `tools/call` asks for an async operation explicitly. */
export function hasOperation(params: unknown): boolean {
  return isRecord(params) && params.operation !== undefined;
}

/** `{ token }` of `tools/async/status|result|cancel`. */
export function decodeTokenRef(params: unknown): { readonly token: string } {
  const { token } = paramsObject(params);
  if (token === undefined) throw invalidParams('token is required');
  if (typeof token !== 'string') throw invalidParams('token must be a string');
  if (token.length === 0 || token.length > MAX_TOKEN_LENGTH) throw invalidToken();
  return { token };
}

/** `tools/call` with `operation?: { token?, keepAlive? }` (L-08; keepAlive in seconds). */
export function decodeAsyncCall(params: unknown): AsyncCall {
  const p = paramsObject(params);
  if (typeof p.name !== 'string' || p.name.length === 0) throw invalidParams('name must be a non-empty string');
  const args = p.arguments ?? {};
  if (!isRecord(args)) throw invalidParams('arguments must be an object', REASONS.invalidArguments);
  const operation = p.operation ?? {};
  if (!isRecord(operation)) throw invalidParams('operation must be an object');
  const { token, keepAlive } = operation;
  if (token !== undefined && (typeof token !== 'string' || token.length === 0 || token.length > MAX_TOKEN_LENGTH)) {
    throw invalidParams(`operation.token must be a string of 1..${MAX_TOKEN_LENGTH} characters`);
  }
  if (keepAlive !== undefined && (typeof keepAlive !== 'number' || !Number.isInteger(keepAlive) || keepAlive < 0)) {
    throw invalidParams('operation.keepAlive must be a non-negative integer number of seconds');
  }
  const meta = isRecord(p._meta) ? p._meta : {};
  const pt = meta.progressToken;
  const webhook = meta[WEBHOOK_META];
  return {
    tool: p.name,
    args,
    token,
    keepAliveS: keepAlive,
    progressToken: typeof pt === 'string' || typeof pt === 'number' ? pt : undefined,
    ...(webhook === undefined ? {} : { webhook }),
  };
}
