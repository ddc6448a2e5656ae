import type { AuthInfo, Transport } from '@modelcontextprotocol/server';
import type { HttpRoute } from './http/routes.js';
import { LIMIT_EXCEEDED_CODE, limitResponse, type ServerLimits } from './limits.js';
import { ERROR_DOMAIN, ERROR_INFO_TYPE } from './wire/aip-151/constants.js';
import { callerOf } from './owner.js';
import type { RawRpcMessage } from './wire/adapter.js';
import { proxyTransport } from './transport-proxy.js';

/** What a rate limit counts: task creations (tool calls) or reads of tasks. */
export type RateKind = 'creates' | 'polls';

/** JSON-RPC methods by what they cost; everything else (cancel, input, listen...) is not rate-limited. */
const RPC_KINDS: Readonly<Record<string, RateKind>> = {
  'tools/call': 'creates',
  'tasks/get': 'polls',
  'tasks/result': 'polls',
  'tasks/list': 'polls',
  'tools/async/status': 'polls',
  'tools/async/result': 'polls',
  'terminus/tasks/lookup': 'polls',
  'terminus/tasks/logs': 'polls',
  'tools/async/logs': 'polls',
  'terminus/tasks/events': 'polls',
  'tools/async/events': 'polls',
};

/** Buckets kept before idle (full) ones are dropped: bounds memory to callers seen recently. */
const MAX_BUCKETS = 10_000;

interface Bucket {
  tokens: number;
  at: number;
}

/**
 * Per-caller token buckets (T-78): a bucket holds a minute's worth (`perMinute`) and refills at
 * `perMinute` a minute, so no caller makes more than about 2 x `perMinute` requests in any minute
 * and a loop hammering the server is held to the rate, while a burst (1,000 calls at once in our
 * own load tests) passes. `take` answers 0 (go) or the milliseconds until the next token.
 */
export class RateLimiter {
  readonly #perMs: number;
  readonly #burst: number;
  readonly #now: () => number;
  readonly #buckets = new Map<string, Bucket>();

  constructor(perMinute: number, now: () => number = Date.now) {
    this.#perMs = perMinute / 60_000;
    this.#burst = Math.max(1, perMinute);
    this.#now = now;
  }

  take(caller: string): number {
    const now = this.#now();
    const bucket = this.#buckets.get(caller) ?? { tokens: this.#burst, at: now };
    bucket.tokens = Math.min(this.#burst, bucket.tokens + (now - bucket.at) * this.#perMs);
    bucket.at = now;
    if (!this.#buckets.has(caller)) this.#prune(now);
    this.#buckets.set(caller, bucket);
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.ceil((1 - bucket.tokens) / this.#perMs);
  }

  #prune(now: number): void {
    if (this.#buckets.size < MAX_BUCKETS) return;
    for (const [caller, bucket] of this.#buckets) {
      if (bucket.tokens + (now - bucket.at) * this.#perMs >= this.#burst) this.#buckets.delete(caller);
    }
  }
}

/** One limiter per kind; a rate of 0 turns that kind's limit off. */
export class CallerRates {
  readonly #limiters: Partial<Record<RateKind, RateLimiter>> = {};
  readonly #limits: Pick<ServerLimits, 'createsPerMinute' | 'pollsPerMinute'>;

  constructor(limits: Pick<ServerLimits, 'createsPerMinute' | 'pollsPerMinute'>, now: () => number = Date.now) {
    this.#limits = limits;
    if (limits.createsPerMinute > 0) this.#limiters.creates = new RateLimiter(limits.createsPerMinute, now);
    if (limits.pollsPerMinute > 0) this.#limiters.polls = new RateLimiter(limits.pollsPerMinute, now);
  }

  /** undefined: go; else the refusal, naming the limit and the wait. */
  refusal(kind: RateKind, caller: string): Refusal | undefined {
    const wait = this.#limiters[kind]?.take(caller) ?? 0;
    if (wait === 0) return undefined;
    const limit = kind === 'creates' ? this.#limits.createsPerMinute : this.#limits.pollsPerMinute;
    const flag = kind === 'creates' ? '--creates-per-minute' : '--polls-per-minute';
    return {
      reason: 'rate_limited',
      message: `Too many ${kind === 'creates' ? 'tool calls' : 'task reads'} from this caller (limit ${limit} a minute, ${flag}); retry after ${wait} ms`,
      limit,
      retryAfterMs: wait,
    };
  }

  /** undefined: go; else a 429 answer naming the limit, with `Retry-After`. */
  check(kind: RateKind, caller: string, id: unknown, respond: RespondLimited = limitResponse): Response | undefined {
    const refused = this.refusal(kind, caller);
    return refused === undefined ? undefined : respond(id, 429, refused);
  }

  /**
   * stdio has no HTTP status: a refused request is answered on the transport itself with the
   * JSON-RPC error `-32029` whose `data.retryAfterMs` carries the delay, and never reaches the SDK.
   * The one stdio client is one caller.
   */
  gateTransport<T extends Transport>(inner: T, caller = 'stdio'): T {
    const refusal = (kind: RateKind): Refusal | undefined => this.refusal(kind, caller);
    return proxyTransport(inner, {
      set: {
        onmessage: (handler) =>
          handler &&
          ((message, extra) => {
            const { id, method } = message as { id?: unknown; method?: unknown };
            const kind = typeof method === 'string' && id !== undefined ? RPC_KINDS[method] : undefined;
            const refused = kind === undefined ? undefined : refusal(kind);
            if (refused === undefined) {
              handler(message, extra);
              return;
            }
            const error = {
              code: LIMIT_EXCEEDED_CODE,
              message: refused.message,
              data: { reason: refused.reason, limit: refused.limit, retryAfterMs: refused.retryAfterMs },
            };
            inner.send({ jsonrpc: '2.0', id: id as string | number, error }).catch(() => undefined);
          }),
      },
    });
  }

  /** The `/mcp` precheck: rate-limits tool calls and task reads on every MCP wire over HTTP. */
  precheck(message: RawRpcMessage, authInfo: AuthInfo | undefined): Response | undefined {
    const kind = typeof message.method === 'string' ? RPC_KINDS[message.method] : undefined;
    if (kind === undefined) return undefined;
    return this.check(kind, callerOf(authInfo), message.id);
  }

  /** AIP-151 routes with the same limits: `:run` creates, every read of an operation polls. */
  guardRoutes(routes: readonly HttpRoute[]): HttpRoute[] {
    return routes.map((route) => ({
      ...route,
      handle: async (request, info) => {
        const kind: RateKind | undefined =
          request.method === 'POST' && new URL(request.url).pathname.endsWith(':run')
            ? 'creates'
            : request.method === 'GET' || new URL(request.url).pathname.endsWith(':wait')
              ? 'polls'
              : undefined;
        const refused = kind === undefined ? undefined : this.check(kind, callerOf(info.authInfo), null, aipLimited);
        return refused ?? route.handle(request, info);
      },
    }));
  }
}

type RespondLimited = typeof limitResponse;
type Refusal = Parameters<RespondLimited>[2];

/** `google.rpc.Status` RESOURCE_EXHAUSTED, HTTP 429, with `Retry-After`. */
const aipLimited: RespondLimited = (_id, status, refusal) =>
  new Response(
    JSON.stringify({
      error: {
        code: status,
        message: refusal.message,
        status: 'RESOURCE_EXHAUSTED',
        details: [
          {
            '@type': ERROR_INFO_TYPE,
            reason: refusal.reason.toUpperCase(),
            domain: ERROR_DOMAIN,
            metadata: { limit: String(refusal.limit), retryAfterMs: String(refusal.retryAfterMs) },
          },
        ],
      },
    }),
    {
      status,
      headers: {
        'content-type': 'application/json',
        'retry-after': String(Math.max(1, Math.ceil(refusal.retryAfterMs / 1000))),
      },
    },
  );
