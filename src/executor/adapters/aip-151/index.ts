/**
 * Client adapter for AIP-151 long-running operations over HTTP/JSON (not an `RpcChannel`): submit
 * is `POST /v1/tools/{tool}:run {arguments, requestId}` with the AIP-155 `requestId` = our
 * submission key (the same requestId and body return the same Operation), status and result are
 * `GET /v1/operations/{id}`, cancel is `POST /v1/operations/{id}:cancel` (an empty, best-effort ack,
 * G-24; the outcome is read by polling, G-25).
 *
 * Key lookup: AIP-151 has no lookup by requestId and our routes add none. Our server serves
 * `terminus/tasks/lookup` on its MCP endpoint, with the same owner derivation as the AIP routes
 * (auth principal, else `anonymous`), so `lookup` (an `RpcChannel` to that endpoint, set by
 * `connectServer` for an HTTP target) answers it without side effects beyond burning an unused key
 * (S6). Without it, `unsupported`. Replaying the POST is not used: the port's lookup has no
 * arguments, and a replay would create the operation that a lookup must only report.
 *
 * Task logs (issue 18): `GET /v1/operations/{id}/logs?after=N&limit=M` answers the same object as
 * `terminus/tasks/logs`. A 404 there is settled by one `GET` of the operation: found means the server
 * has no logs route (`unsupported`), not found is `not_found`.
 *
 * No input rounds on this wire: `sendInput` rejects.
 */
import type { Clock } from '../../../core/ports.js';
import type { ClientWire, RpcChannel } from '../../wire-port.js';
import { WireFailure } from '../../wire-port.js';
import { LOOKUP_METHOD } from '../envelope.js';
import { decodeEventPage } from '../events.js';
import { decodeLogPage } from '../logs.js';
import { isRpcError, RPC_CODES } from '../rpc-error.js';
import { decodeLookup } from '../tasks-ext/codec.js';
import { decodeOperation, toResult, toSnapshot, toSubmitAnswer } from './codec.js';
import { createAipHttp } from './http.js';

export const AIP_151_ADAPTER_VERSION = 'aip-151-client/1';

export interface Aip151WireOptions {
  /** API root (scheme, host, port), e.g. `http://127.0.0.1:3000`; routes are under `/v1`. */
  readonly baseUrl: string;
  readonly clock: Clock;
  /** Per-request timeout; reaching it is `lost`. Default 30 000. */
  readonly timeoutMs?: number;
  /** Extra headers on every request (authorization: the same principal as the MCP routes). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly fetch?: typeof fetch;
  /** `terminus/tasks/lookup` on the server's MCP endpoint, when it has one (see above). */
  readonly lookup?: RpcChannel;
  readonly close?: () => Promise<void>;
}

/** @example const wire = createAip151Wire({ baseUrl: 'http://127.0.0.1:3000', clock: systemClock }); */
export function createAip151Wire(options: Aip151WireOptions): ClientWire {
  const http = createAipHttp({
    baseUrl: options.baseUrl,
    clock: options.clock,
    timeoutMs: options.timeoutMs ?? 30_000,
    ...(options.headers === undefined ? {} : { headers: options.headers }),
    ...(options.fetch === undefined ? {} : { fetch: options.fetch }),
  });
  const opPath = (id: string, verb?: string): string =>
    `/v1/operations/${encodeURIComponent(id)}${verb === undefined ? '' : `:${verb}`}`;
  const read = async (id: string, signal?: AbortSignal) =>
    decodeOperation(await http('GET', opPath(id), undefined, signal), id);

  return {
    wire: 'aip-151',
    version: AIP_151_ADAPTER_VERSION,

    async submit(request, signal) {
      const body = { arguments: request.args, requestId: request.submissionKey };
      const path = `/v1/tools/${encodeURIComponent(request.tool)}:run`;
      return toSubmitAnswer(decodeOperation(await http('POST', path, body, signal)));
    },

    async lookupKey(submissionKey, signal) {
      if (options.lookup === undefined) return { kind: 'unsupported' };
      try {
        return decodeLookup(await options.lookup(LOOKUP_METHOD, { submissionKey }, { signal }));
      } catch (error) {
        if (isRpcError(error, RPC_CODES.methodNotFound)) return { kind: 'unsupported' };
        throw error;
      }
    },

    getStatus: async (taskId, signal) => toSnapshot(await read(taskId, signal)),

    fetchResult: async (taskId, signal) => toResult(await read(taskId, signal)),

    async cancel(taskId, signal) {
      await http('POST', opPath(taskId, 'cancel'), {}, signal);
      // G-25: Empty proves nothing; the operation may still complete normally. Keep polling.
      return { kind: 'acked' };
    },

    async logs(taskId, request, signal) {
      const after = request.after ?? 0;
      const query = `after=${after}${request.limit === undefined ? '' : `&limit=${request.limit}`}`;
      try {
        const raw = await http('GET', `${opPath(taskId)}/logs?${query}`, undefined, signal);
        return { kind: 'page', ...decodeLogPage(raw, taskId, after) };
      } catch (error) {
        if (!(error instanceof WireFailure) || error.kind !== 'not_found') throw error;
        await read(taskId, signal); // throws `not_found` when the operation is unknown
        return { kind: 'unsupported' };
      }
    },

    async events(taskId, request, signal) {
      const query = new URLSearchParams();
      if (request.cursor !== undefined) query.set('cursor', request.cursor);
      if (request.limit !== undefined) query.set('limit', String(request.limit));
      try {
        const raw = await http('GET', `${opPath(taskId)}/events?${query.toString()}`, undefined, signal);
        return { kind: 'page', ...decodeEventPage(raw, taskId, request.cursor) };
      } catch (error) {
        if (!(error instanceof WireFailure) || error.kind !== 'not_found') throw error;
        await read(taskId, signal); // throws `not_found` when the operation is unknown
        return { kind: 'unsupported' };
      }
    },

    sendInput: async () => {
      throw new WireFailure('rejected', 'AIP-151 operations take no input; input rounds are not supported');
    },

    close: async () => {
      await options.close?.();
    },
  };
}
