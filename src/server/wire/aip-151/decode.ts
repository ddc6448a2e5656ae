import { TASK_STATUSES, WIRES, type TaskStatus, type WireName } from '../../../core/task.js';
import { DEFAULT_PAGE_SIZE, DEFAULT_WAIT_MS, MAX_PAGE_SIZE, MAX_REQUEST_ID_LENGTH, MAX_WAIT_MS } from './constants.js';
import { invalidArgument, operationNotFound } from './errors.js';
import { isRecord } from '../../../core/json.js';

/**
 * Decoding: HTTP paths, queries and JSON bodies -> engine command inputs. Pure; a bad input is an
 * `AipError` (INVALID_ARGUMENT, or NOT_FOUND for a name that cannot be ours).
 */

const MAX_ID_LENGTH = 256;

/** `{id}` or `{id}:{verb}` of `/v1/operations/{segment}` (custom methods, AIP-136). */
export interface OperationRef {
  readonly id: string;
  readonly verb: string | undefined;
}

export function decodeOperationSegment(segment: string): OperationRef {
  const colon = segment.indexOf(':');
  const id = colon === -1 ? segment : segment.slice(0, colon);
  const verb = colon === -1 ? undefined : segment.slice(colon + 1);
  if (id.length === 0 || id.length > MAX_ID_LENGTH) throw operationNotFound();
  return { id, verb };
}

/** `{tool}:run` of `/v1/tools/{segment}`; tool names may not contain `:` here. */
export function decodeToolSegment(segment: string): { readonly tool: string; readonly verb: string | undefined } {
  const colon = segment.lastIndexOf(':');
  if (colon <= 0) return { tool: segment, verb: undefined };
  return { tool: segment.slice(0, colon), verb: segment.slice(colon + 1) };
}

export interface ListInput {
  readonly pageSize: number;
  readonly pageToken: string | undefined;
  readonly status: readonly TaskStatus[] | undefined;
  readonly wire: WireName | undefined;
}

/** Both spellings are accepted: proto field names (`page_size`) and their JSON names (`pageSize`). */
function param(query: URLSearchParams, snake: string, camel: string): string | undefined {
  return query.get(snake) ?? query.get(camel) ?? undefined;
}

export function decodeListQuery(query: URLSearchParams): ListInput {
  const rawSize = param(query, 'page_size', 'pageSize');
  let pageSize = DEFAULT_PAGE_SIZE;
  if (rawSize !== undefined) {
    const n = Number(rawSize);
    if (!Number.isInteger(n) || n < 0) throw invalidArgument('page_size must be a non-negative integer');
    // AIP-158: 0 means "server default"; above the maximum is coerced down, not refused.
    pageSize = n === 0 ? DEFAULT_PAGE_SIZE : Math.min(n, MAX_PAGE_SIZE);
  }
  const pageToken = param(query, 'page_token', 'pageToken');
  const { status, wire } = decodeFilter(query.get('filter') ?? '');
  return { pageSize, pageToken: pageToken === '' ? undefined : pageToken, status, wire };
}

const DONE: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];
const NOT_DONE: readonly TaskStatus[] = ['working', 'input_required'];

/**
 * A small AIP-160 subset the store can answer without breaking pagination: terms joined by `AND`,
 * each `done = true|false`, `metadata.status = "<status>"` or `metadata.wire = "<wire>"`.
 * Anything else is INVALID_ARGUMENT, never silently ignored.
 * @example decodeFilter('done = false AND metadata.wire = "aip-151"')
 */
export function decodeFilter(filter: string): { status: TaskStatus[] | undefined; wire: WireName | undefined } {
  let status: TaskStatus[] | undefined;
  let wire: WireName | undefined;
  const text = filter.trim();
  if (text === '') return { status, wire };
  const narrow = (allowed: readonly TaskStatus[]): void => {
    status = (status ?? [...TASK_STATUSES]).filter((s) => allowed.includes(s));
  };
  for (const term of text.split(/\s+AND\s+/)) {
    const match = /^([A-Za-z_.]+)\s*=\s*(?:"([^"]*)"|([A-Za-z0-9_-]+))$/.exec(term.trim());
    if (match === null) throw invalidArgument(`unsupported filter term: ${term.trim()}`, 'invalid_filter');
    const field = match[1] as string;
    const value = (match[2] ?? match[3]) as string;
    if (field === 'done') {
      if (value !== 'true' && value !== 'false') throw invalidArgument('done must be true or false', 'invalid_filter');
      narrow(value === 'true' ? DONE : NOT_DONE);
    } else if (field === 'metadata.status') {
      if (!(TASK_STATUSES as readonly string[]).includes(value)) {
        throw invalidArgument(`unknown status in filter: ${value}`, 'invalid_filter');
      }
      narrow([value as TaskStatus]);
    } else if (field === 'metadata.wire') {
      if (!(WIRES as readonly string[]).includes(value))
        throw invalidArgument(`unknown wire in filter: ${value}`, 'invalid_filter');
      if (wire !== undefined && wire !== value) status = [];
      wire = value as WireName;
    } else {
      throw invalidArgument(`unsupported filter field: ${field}`, 'invalid_filter');
    }
  }
  return { status, wire };
}

/** `google.protobuf.Duration` JSON (`"30s"`, `"1.5s"`) -> milliseconds, capped (G-27). */
export function decodeDuration(value: unknown): number {
  if (value === undefined || value === null) return DEFAULT_WAIT_MS;
  if (typeof value !== 'string') throw invalidArgument('timeout must be a Duration string such as "30s"');
  const match = /^(\d+(?:\.\d{1,9})?)s$/.exec(value);
  if (match === null) throw invalidArgument('timeout must be a Duration string such as "30s"');
  return Math.min(Math.round(Number(match[1]) * 1000), MAX_WAIT_MS);
}

export interface RunInput {
  readonly args: Record<string, unknown>;
  readonly requestId: string | undefined;
  /** `webhook` `{ url, secret, events? }` as sent (the call's own endpoint); the engine decodes and checks it. */
  readonly webhook?: unknown;
}

/** Parses a JSON body; an absent body is `{}`. */
export function decodeJsonBody(body: Buffer | undefined): Record<string, unknown> {
  if (body === undefined || body.length === 0) return {};
  let value: unknown;
  try {
    value = JSON.parse(body.toString('utf8'));
  } catch {
    throw invalidArgument('body must be JSON');
  }
  if (!isRecord(value)) throw invalidArgument('body must be a JSON object');
  return value;
}

/** `POST /v1/tools/{tool}:run` body: `{ arguments?, requestId? }`; `requestId` is AIP-155's. */
export function decodeRunBody(body: Record<string, unknown>): RunInput {
  const args = body.arguments ?? {};
  if (!isRecord(args)) throw invalidArgument('arguments must be an object', 'invalid_arguments');
  const requestId = body.requestId ?? body.request_id;
  const webhook = body.webhook === undefined ? {} : { webhook: body.webhook };
  if (requestId === undefined) return { args, requestId: undefined, ...webhook };
  if (typeof requestId !== 'string' || requestId.length === 0 || requestId.length > MAX_REQUEST_ID_LENGTH) {
    throw invalidArgument(
      `requestId must be a string of 1..${MAX_REQUEST_ID_LENGTH} characters (a UUID is recommended)`,
    );
  }
  return { args, requestId, ...webhook };
}
