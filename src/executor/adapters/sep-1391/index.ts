/**
 * Client adapter for SEP-1391 async tools over any `RpcChannel` in the legacy era (after an
 * `initialize` declaring `capabilities.experimental["mcp-terminus.dev/sep-1391"]`, our server's
 * L-06 flag): `tools/call` with `operation.token` = our submission key, `tools/async/status`,
 * `tools/async/result`, and our server's `tools/async/cancel`.
 *
 * Key lookup (SUBMISSION_UNKNOWN): `terminus/tasks/lookup` when the connection has it, else
 * `tools/async/status` naming the key as token. Our server resolves a token by task id, then by
 * submission key, and looking up an unused key burns it (S6: the lost call, if it arrives late,
 * fails instead of running unobserved), so `-32602` with `data.reason = "invalid_token"` proves the
 * call never created anything. A `-32602` without our reason (another SEP server, whose tokens may
 * be server-minted) proves nothing: `unsupported`, settled by hand. Replaying `tools/call` is not
 * used: the port's lookup has no arguments, and a replay would turn a lookup into a submission.
 *
 * Cancel: SEP-1391 has no cancel RPC (it cancels with `notifications/cancelled` on the original
 * request id, L-22, which a resumed executor no longer knows). Our server adds
 * `tools/async/cancel {token}`, answering the status after the cancel; a server without it
 * (`-32601`) gets a `rejected` failure saying so.
 *
 * Task logs (issue 18): our `tools/async/logs {token, after?, limit?}` answers the page of
 * `terminus/tasks/logs` plus the token; `-32601` from a server without it is `unsupported`.
 *
 * Input rounds (server requests flushed while polling status, L-20) are not supported: `sendInput`
 * rejects, as on the 2025-11-25 adapter.
 */
import type { SessionBinding } from '../../operation.js';
import type { ClientWire, KeyLookupAnswer, RpcChannel, TaskSnapshot } from '../../wire-port.js';
import { WireFailure } from '../../wire-port.js';
import { LOOKUP_METHOD } from '../envelope.js';
import { decodeLogPage, logsParams } from '../logs.js';
import { isRpcError, malformed, RPC_CODES, type RpcErrorFailure } from '../rpc-error.js';
import { decodeLookup } from '../tasks-ext/codec.js';
import {
  decodeAccepted,
  decodeResult,
  decodeStatus,
  encodeCall,
  outcomeOfStatus,
  SEP_REASONS,
  statusInError,
} from './codec.js';

export const SEP_1391_ADAPTER_VERSION = 'sep-1391-client/1';
export const SEP_STATUS_METHOD = 'tools/async/status';
export const SEP_RESULT_METHOD = 'tools/async/result';
/** Our server's addition (`src/server/wire/sep-1391/constants.ts`); not in the SEP. */
export const SEP_CANCEL_METHOD = 'tools/async/cancel';
/** Our server's task log read (issue 18), `{token, after?, limit?}`; not in the SEP. */
export const SEP_LOGS_METHOD = 'tools/async/logs';
/** The L-06 feature flag our server reads from `initialize` (`capabilities.experimental`). */
export const SEP_1391_CAPABILITY = 'mcp-terminus.dev/sep-1391';

export interface Sep1391WireOptions {
  readonly channel: RpcChannel;
  /**
   * `keepAlive` asked for when the submit names no TTL, seconds after completion (L-08, L-21);
   * default: the server's choice (ours: 3600). A submit's `ttlMs` is sent rounded up to seconds.
   */
  readonly keepAliveS?: number;
  readonly close?: () => Promise<void>;
  /** The HTTP session the connection is in (`ClientWire.session`); absent: none (stdio). */
  readonly session?: () => SessionBinding | undefined;
  /** As the 2025-11-25 adapter's: added to every `not_found` when the operation's session was lost. */
  readonly sessionNote?: string;
}

/** @example const wire = createSep1391Wire({ channel: connection.request }); */
export function createSep1391Wire(options: Sep1391WireOptions): ClientWire {
  const { channel } = options;

  // `operation_expired` (our server) says the operation existed and its keepAlive ended: the 404
  // after expiry, whose observed terminal status is the receipt. Without it the answers carry no
  // expiry instant to tell it from a lost operation, and every such read ended UNKNOWN (the SEP-1391
  // UNKNOWN p99 of ~180 s in the gate: these stayed in doubt until the series ended).
  const notFound = (error: RpcErrorFailure): WireFailure =>
    new WireFailure('not_found', error.message, {
      rpcCode: error.rpcCode,
      cause: error,
      ...(error.reason === SEP_REASONS.operationExpired ? { afterExpiry: true } : {}),
      ...(options.sessionNote === undefined ? {} : { note: options.sessionNote }),
    });

  /** `tools/async/status`; a cancelled operation answers `-32602` (L-15), which is its status here. */
  async function status(token: string, signal?: AbortSignal): Promise<TaskSnapshot> {
    try {
      return decodeStatus(await channel(SEP_STATUS_METHOD, { token }, { signal }), token);
    } catch (error) {
      if (!isRpcError(error, RPC_CODES.invalidParams)) throw error;
      if (error.reason === SEP_REASONS.operationCancelled) return { taskId: token, status: 'cancelled' };
      throw notFound(error);
    }
  }

  async function lookupByStatus(token: string, signal?: AbortSignal): Promise<KeyLookupAnswer> {
    try {
      return { kind: 'found', ...(await status(token, signal)) };
    } catch (error) {
      if (!(error instanceof WireFailure) || error.kind !== 'not_found') throw error;
      const cause = error.cause;
      return isRpcError(cause) && cause.reason === SEP_REASONS.invalidToken
        ? { kind: 'never_created' }
        : { kind: 'unsupported' };
    }
  }

  return {
    wire: 'sep-1391',
    version: SEP_1391_ADAPTER_VERSION,
    ...(options.session === undefined ? {} : { session: options.session }),

    async submit(request, signal) {
      const keepAliveS = request.ttlMs === undefined ? options.keepAliveS : Math.ceil(request.ttlMs / 1000);
      const params = encodeCall(request.tool, request.args, request.submissionKey, keepAliveS);
      return decodeAccepted(await channel('tools/call', params, { signal }));
    },

    async lookupKey(submissionKey, signal) {
      try {
        return decodeLookup(await channel(LOOKUP_METHOD, { submissionKey }, { signal }));
      } catch (error) {
        if (!isRpcError(error, RPC_CODES.methodNotFound)) throw error;
      }
      return lookupByStatus(submissionKey, signal);
    },

    getStatus: status,

    async fetchResult(taskId, signal) {
      try {
        return decodeResult(await channel(SEP_RESULT_METHOD, { token: taskId }, { signal }));
      } catch (error) {
        if (!isRpcError(error)) throw error;
        if (error.rpcCode === RPC_CODES.invalidParams) {
          if (error.reason === SEP_REASONS.operationCancelled) return { status: 'cancelled' };
          throw notFound(error);
        }
        if (error.rpcCode !== RPC_CODES.invalidRequest) throw error;
        // L-16: not completed. Our server says where it is; another one is asked once.
        const where = statusInError(error) ?? (await status(taskId, signal));
        const outcome = outcomeOfStatus(where.status, where.statusMessage);
        if (outcome === null) throw new WireFailure('malformed', `result read while the operation is ${where.status}`);
        return outcome;
      }
    },

    async cancel(taskId, signal) {
      let answer: Record<string, unknown>;
      try {
        answer = await channel(SEP_CANCEL_METHOD, { token: taskId }, { signal });
      } catch (error) {
        if (!isRpcError(error)) throw error;
        if (error.rpcCode === RPC_CODES.methodNotFound) {
          throw new WireFailure(
            'rejected',
            'the server has no tools/async/cancel; SEP-1391 cancels only by notifications/cancelled on the ' +
              'original tools/call, which this client cannot send after the call was answered',
            { rpcCode: error.rpcCode, cause: error },
          );
        }
        if (error.rpcCode !== RPC_CODES.invalidParams) throw error;
        if (error.reason === SEP_REASONS.operationCancelled) return { kind: 'already_terminal', status: 'cancelled' };
        throw notFound(error);
      }
      // Ours answers the status after the cancel: `canceled` proves the cancel; a completed or failed
      // operation was terminal before it and keeps its status (never rewritten to cancelled).
      const after = decodeStatus(answer, taskId).status;
      if (after === 'completed' || after === 'failed') return { kind: 'already_terminal', status: after };
      return { kind: 'acked', status: after };
    },

    async logs(taskId, request, signal) {
      const after = request.after ?? 0;
      try {
        const { taskId: _id, ...query } = logsParams(taskId, request);
        const raw = await channel(SEP_LOGS_METHOD, { token: taskId, ...query }, { signal });
        // The page names the server's task id; on this wire the operation is known by its token.
        if (raw.token !== undefined && raw.token !== taskId)
          throw malformed(`logs answer is about token ${JSON.stringify(raw.token)}, not ${taskId}`);
        return { kind: 'page', ...decodeLogPage({ ...raw, taskId }, taskId, after) };
      } catch (error) {
        if (isRpcError(error, RPC_CODES.methodNotFound)) return { kind: 'unsupported' };
        if (isRpcError(error, RPC_CODES.invalidParams)) throw notFound(error);
        throw error;
      }
    },

    sendInput: async () => {
      throw new WireFailure('rejected', 'input rounds are not supported on the SEP-1391 client adapter');
    },

    close: async () => {
      await options.close?.();
    },
  };
}
