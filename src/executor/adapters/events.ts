/**
 * Ordered task events on the client side (issue 32): the one JSON object our servers answer
 * (`terminus/tasks/events` on both MCP wires, `GET /v1/operations/{id}/events` on AIP-151), decoded
 * and checked. A page whose events are not in increasing seq order, or whose first is not after the
 * cursor asked for, is `malformed` (read again, never shown half): a follower would repeat or skip.
 * `-32601` is `unsupported` (a server that is not ours); a `-32602` whose `data.reason` says the task
 * is not found is `not_found`, any other `-32602` (a bad cursor or limit) is `rejected`: reading again
 * with it cannot help.
 */
import type { EventPage, EventsAnswer, EventsRequest, RpcChannel, ServerEvent } from '../wire-port.js';
import { WireFailure } from '../wire-port.js';
import { isRecord, isRpcError, malformed, RPC_CODES } from './rpc-error.js';
import { isWireStatus } from './snapshot.js';

export const EVENTS_METHOD = 'terminus/tasks/events';
/** The `_meta` key of `tasks/get` and status pushes with `{ lastSeq, cursor }`. */
export const EVENTS_META = 'mcp-terminus.dev/events';

const KINDS = new Set(['status', 'progress', 'input_requested', 'input_answered', 'log']);
const count = (value: unknown): value is number => typeof value === 'number' && Number.isInteger(value) && value >= 0;

/** The seq a cursor of ours stands after (`<seq>.<tag>`), or null for one we cannot read. */
export function cursorSeq(cursor: string | undefined): number | null {
  if (cursor === undefined) return 0;
  const match = /^(\d{1,15})\./.exec(cursor);
  return match === null ? null : Number(match[1]);
}

function decodeEvent(raw: unknown): ServerEvent {
  if (!isRecord(raw)) throw malformed('event is not an object');
  const { seq, at, kind } = raw;
  if (!count(seq) || seq < 1) throw malformed('event without a positive seq');
  if (typeof at !== 'string') throw malformed(`event ${seq} without a time`);
  if (typeof kind !== 'string' || !KINDS.has(kind)) throw malformed(`event ${seq} has kind ${String(kind)}`);
  if (kind === 'status' && !isWireStatus(raw.status)) throw malformed(`event ${seq} has status ${String(raw.status)}`);
  return raw as ServerEvent;
}

/** The page, checked against the cursor it answers. */
export function decodeEventPage(raw: unknown, taskId: string, cursor: string | undefined): EventPage {
  if (!isRecord(raw)) throw malformed('events answer is not an object');
  if (raw.taskId !== taskId) throw malformed(`events answer is about ${String(raw.taskId)}, not ${taskId}`);
  if (!Array.isArray(raw.events)) throw malformed('events answer without events');
  const { cursor: next, lastSeq, status, done } = raw;
  if (typeof next !== 'string' || !count(lastSeq)) throw malformed('events answer without a cursor and lastSeq');
  if (!isWireStatus(status)) throw malformed(`events answer with status ${String(status)}`);
  if (typeof done !== 'boolean') throw malformed('events answer without done');
  const events = raw.events.map(decodeEvent);
  let last = cursorSeq(cursor) ?? 0;
  for (const event of events) {
    if (event.seq <= last) throw malformed(`event ${event.seq} is not after ${last}`);
    last = event.seq;
  }
  const poll = raw.pollIntervalMs;
  const pollIntervalMs = typeof poll === 'number' && Number.isFinite(poll) && poll >= 1 ? poll : undefined;
  return {
    taskId,
    events,
    cursor: next,
    lastSeq,
    status,
    done,
    ...(pollIntervalMs === undefined ? {} : { pollIntervalMs }),
  };
}

/** `terminus/tasks/events` over a JSON-RPC channel (either MCP wire). */
export async function rpcEvents(
  channel: RpcChannel,
  taskId: string,
  request: EventsRequest,
  signal?: AbortSignal,
): Promise<EventsAnswer> {
  const params = {
    taskId,
    ...(request.cursor === undefined ? {} : { cursor: request.cursor }),
    ...(request.limit === undefined ? {} : { limit: request.limit }),
  };
  try {
    return {
      kind: 'page',
      ...decodeEventPage(await channel(EVENTS_METHOD, params, { signal }), taskId, request.cursor),
    };
  } catch (error) {
    if (isRpcError(error, RPC_CODES.methodNotFound)) return { kind: 'unsupported' };
    if (isRpcError(error, RPC_CODES.invalidParams)) {
      const kind = error.reason === 'task_not_found' ? 'not_found' : 'rejected';
      throw new WireFailure(kind, error.message, { rpcCode: error.rpcCode, cause: error });
    }
    throw error;
  }
}
