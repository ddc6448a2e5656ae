import { randomUUID } from 'node:crypto';
import {
  legacyStatelessFallback,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type AuthInfo,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import type { Logger } from '../../../core/ports.js';
import type { FastMethod, LegacyFastLeg } from '../../http/fast-path.js';
import type { TaskEngine } from '../../../runner/engine-port.js';
import { trackInFlight, type InFlight } from '../../in-flight.js';
import { CallerSlots } from '../../caller-slots.js';
import { DEFAULT_LIMITS, defaultSessionsPerCaller, limitResponse } from '../../limits.js';
import { callerOf, principalOf } from '../../owner.js';
import { isRecord } from './decode.js';
import { createStatusNotifier } from './notifier.js';
import { attachSession } from './session-hooks.js';

/**
 * The sessionful 2025-era HTTP leg. The SDK's default legacy leg is stateless (a fresh server per
 * request): it cannot carry the `input_required` side channel (an elicitation sent on a
 * `tasks/result` stream whose reply arrives on another POST), has no GET stream for
 * `notifications/tasks/status`, and forgets the client's `initialize` capabilities (reference 5.7).
 * This leg keeps one SDK `Server` + `WebStandardStreamableHTTPServerTransport` per `Mcp-Session-Id`,
 * built by the same factory, so every wire's legacy methods are installed as usual.
 *
 * - `initialize` without a session header opens a session;
 * - a request naming a session goes to it (404 for an unknown one, as the transport rules say; also
 *   404 when the caller's principal differs from the one that opened it);
 * - open sessions are bounded on the server (`maxSessions`, 503) and per caller
 *   (`maxSessionsPerCaller`, 429), so one caller at its bound never refuses another's `initialize`;
 * - any other session-less request is served by the SDK's stateless leg, so stateless 2025 clients
 *   keep working (without the side channel and notifications).
 *
 * Route to it with the SDK's `isLegacyRequest` in front of a `legacy: 'reject'` modern handler.
 */
export interface LegacySessionLeg {
  handle(request: Request, options: { authInfo?: AuthInfo; parsedBody?: unknown }): Promise<Response>;
  /** Closes every session (their streams end); later requests naming them get 404. */
  close(): Promise<void>;
  /** Open sessions, for operators and tests. */
  readonly size: number;
  /** Set when the leg was given `fastMethods`: what the HTTP fast path may answer on its sessions. */
  readonly fast?: LegacyFastLeg;
}

export interface LegacySessionLegOptions {
  readonly factory: McpServerFactory;
  readonly engine: TaskEngine;
  readonly logger: Logger;
  /** Decides whether to advertise `tasks.list` to the session's caller (T-77). */
  readonly canList: (authInfo: AuthInfo | undefined) => boolean;
  /**
   * A session that received no request for this long is closed (its streams end; the client gets
   * 404 and re-initializes, as the transport rules say). Default 1 h; bounds memory held for
   * clients that never send DELETE.
   */
  readonly idleMs?: number;
  /** Sessions open at once; one more `initialize` is answered 503 with Retry-After. 1000. */
  readonly maxSessions?: number;
  /**
   * Sessions one caller (`callerOf`: its principal, or `anonymous`) holds open at once; one more
   * `initialize` from it is answered 429 with Retry-After. Default `defaultSessionsPerCaller`.
   */
  readonly maxSessionsPerCaller?: number;
  /** The handlers the HTTP fast path may run on a session (`legacyFastMethods`); none: no fast path. */
  readonly fastMethods?: ReadonlyMap<string, FastMethod>;
}

const DEFAULT_IDLE_MS = 3_600_000;
/** A refused `initialize` may try again after this long: idle sessions close within idleMs / 4. */
const SESSIONS_RETRY_MS = 30_000;

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  /** The principal that opened it (`principalOf`); undefined: anonymous. */
  readonly principal: string | undefined;
  readonly close: () => void;
  /** Requests the transport has dispatched and not answered (set once connected). */
  inFlight: InFlight | undefined;
  lastSeen: number;
}

export function createLegacySessionLeg(options: LegacySessionLegOptions): LegacySessionLeg {
  const sessions = new Map<string, Session>();
  const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
  const maxSessions = options.maxSessions ?? DEFAULT_LIMITS.maxSessions;
  const slots = new CallerSlots({
    total: maxSessions,
    perCaller: options.maxSessionsPerCaller ?? defaultSessionsPerCaller(maxSessions),
  });
  const sweep = setInterval(
    () => {
      const now = Date.now();
      for (const session of [...sessions.values()]) {
        if (now - session.lastSeen < idleMs) continue;
        session.close();
        session.server.close().catch(() => undefined);
      }
    },
    Math.max(10, Math.min(60_000, idleMs / 4)),
  );
  sweep.unref();
  const stateless = legacyStatelessFallback(options.factory, (error) =>
    options.logger.debug('legacy stateless request rejected', { error: error.message }),
  );

  /** Removes an opened session and gives its caller's slot back, once. */
  const forget = (sessionId: string, caller: string): void => {
    if (sessions.delete(sessionId)) slots.release(caller);
  };

  /** Opens a session on a slot `caller` was admitted to; the slot is given back if none opens. */
  async function open(
    request: Request,
    authInfo: AuthInfo | undefined,
    parsedBody: unknown,
    caller: string,
  ): Promise<Response> {
    let id: string | undefined;
    try {
      return await openSession(request, authInfo, parsedBody, (sessionId) => (id = sessionId));
    } finally {
      if (id === undefined) slots.release(caller);
    }
  }

  async function openSession(
    request: Request,
    authInfo: AuthInfo | undefined,
    parsedBody: unknown,
    opened: (sessionId: string) => void,
  ): Promise<Response> {
    const caller = callerOf(authInfo);
    const built = await options.factory({
      era: 'legacy',
      requestInfo: request,
      ...(authInfo === undefined ? {} : { authInfo }),
    });
    const server = built instanceof Server ? built : built.server;
    if (options.canList(authInfo)) server.registerCapabilities({ tasks: { list: {} } });
    // Built before the transport (below), which the notifier asks for its GET stream.
    const made: { transport?: WebStandardStreamableHTTPServerTransport } = {};
    const notifier = createStatusNotifier(server, options.engine, options.logger, () =>
      made.transport === undefined ? true : hasStandaloneStream(made.transport),
    );
    const cancels = new CancelByRequestId(options.engine, options.logger);
    attachSession(server, {
      taskCreated: (task, token, follow) => notifier.taskCreated(task, token, follow),
      cancelOnNotification: (requestId, task) => cancels.track(requestId, task),
    });
    let id: string | undefined;
    const session: Session = {
      transport: new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (sessionId) => {
          id = sessionId;
          opened(sessionId);
          sessions.set(sessionId, session);
        },
        onsessionclosed: (sessionId) => {
          forget(sessionId, caller);
          notifier.close();
        },
      }),
      server,
      principal: principalOf(authInfo),
      close: () => {
        notifier.close();
        if (id !== undefined) forget(id, caller);
      },
      inFlight: undefined,
      lastSeen: Date.now(),
    };
    made.transport = session.transport;
    session.transport.onclose = session.close;
    // A refused initialize (400: a malformed request, a bad Accept) never gets a session id; then
    // nothing of it may outlive the request: the notifier's engine listener would otherwise hold
    // the SDK server and transport for ever (issue 12 item 4).
    const discardUnlessOpened = (): void => {
      if (id !== undefined) return;
      notifier.close();
      server.close().catch(() => undefined);
    };
    try {
      await server.connect(session.transport);
      cancels.intercept(session.transport);
      session.inFlight = trackInFlight(session.transport);
      return await session.transport.handleRequest(request, {
        parsedBody,
        ...(authInfo === undefined ? {} : { authInfo }),
      });
    } finally {
      // Idle time counts from the answer: a slow first initialize must not look idle.
      session.lastSeen = Date.now();
      discardUnlessOpened();
    }
  }

  return {
    async handle(request, { authInfo, parsedBody }) {
      const sessionId = request.headers.get('mcp-session-id');
      if (sessionId !== null) {
        const session = sessions.get(sessionId);
        if (session === undefined || session.principal !== principalOf(authInfo)) return sessionNotFound();
        session.lastSeen = Date.now();
        return session.transport.handleRequest(request, {
          parsedBody,
          ...(authInfo === undefined ? {} : { authInfo }),
        });
      }
      if (request.method === 'POST' && isInitialize(parsedBody)) {
        const caller = callerOf(authInfo);
        const admitted = slots.admit(caller);
        if (!admitted.ok) {
          // The caller's own bound is its own excess (429); the server's is everyone's (503).
          const own = admitted.scope === 'caller';
          return limitResponse((parsedBody as { id?: unknown }).id, own ? 429 : 503, {
            reason: 'too_many_sessions',
            message: own
              ? `Too many open sessions for this caller (limit ${admitted.limit}, --max-sessions-per-caller); ` +
                'end one with DELETE, or retry once an idle one has closed'
              : `Too many open sessions on this server (limit ${admitted.limit}, --max-sessions); ` +
                'retry later or end a session with DELETE',
            limit: admitted.limit,
            retryAfterMs: SESSIONS_RETRY_MS,
          });
        }
        return open(request, authInfo, parsedBody, caller);
      }
      return stateless(request, { parsedBody, ...(authInfo === undefined ? {} : { authInfo }) });
    },
    async close() {
      clearInterval(sweep);
      const open = [...sessions.values()];
      await Promise.allSettled(
        open.map(async (s) => {
          s.close();
          await s.server.close();
        }),
      );
    },
    get size() {
      return sessions.size;
    },
    ...(options.fastMethods === undefined
      ? {}
      : {
          fast: {
            methods: options.fastMethods,
            claim(sessionId, authInfo, requestId) {
              const session = sessions.get(sessionId);
              if (session === undefined || session.principal !== principalOf(authInfo)) return undefined;
              if (session.inFlight === undefined || session.inFlight.count(requestId) > 0) return undefined;
              session.lastSeen = Date.now();
              return session.server;
            },
          },
        }),
  };
}

/**
 * Whether the session's client has its GET stream open, where notifications not tied to a request
 * go: SDK 2.4's transport keeps it in `_streamMapping` under `_GET_stream` and drops such a message
 * when it is absent. Read defensively: a transport without that map (another SDK version) counts
 * as listening, so notifications are then built as before, never lost to this check.
 */
function hasStandaloneStream(transport: WebStandardStreamableHTTPServerTransport): boolean {
  const streams = (transport as unknown as { _streamMapping?: unknown })._streamMapping;
  if (!(streams instanceof Map)) return true;
  const id = (transport as unknown as { _standaloneSseStreamId?: unknown })._standaloneSseStreamId;
  return streams.has(typeof id === 'string' ? id : '_GET_stream');
}

function isInitialize(body: unknown): boolean {
  return isRecord(body) && body.method === 'initialize';
}

function sessionNotFound(): Response {
  const body = { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } };
  return new Response(JSON.stringify(body), { status: 404, headers: { 'content-type': 'application/json' } });
}

/** Most `tools/call` ids remembered per session for L-22; older ones are forgotten first. */
const MAX_TRACKED_CALLS = 1000;

/**
 * SEP-1391 cancels an async operation with `notifications/cancelled` naming the original
 * `tools/call` id (L-22). The SDK's own handler only aborts in-flight requests, and replacing it
 * would lose that; so this watches the session transport's inbound messages (public
 * `Transport.onmessage`) and cancels the tracked task, then lets the SDK see the message as usual.
 * 2025-11-25 tasks are never tracked: that spec forbids cancelling tasks this way (T-61).
 */
class CancelByRequestId {
  readonly #calls = new Map<string | number, { owner: string; taskId: string }>();
  readonly #engine: TaskEngine;
  readonly #logger: Logger;

  constructor(engine: TaskEngine, logger: Logger) {
    this.#engine = engine;
    this.#logger = logger;
  }

  track(requestId: string | number, task: { owner: string; id: string }): void {
    this.#calls.set(requestId, { owner: task.owner, taskId: task.id });
    if (this.#calls.size > MAX_TRACKED_CALLS) this.#calls.delete(this.#calls.keys().next().value as string | number);
  }

  intercept(transport: WebStandardStreamableHTTPServerTransport): void {
    const inner = transport.onmessage;
    transport.onmessage = (message, extra) => {
      const { method, params } = message as { method?: unknown; params?: { requestId?: unknown } };
      const requestId = params?.requestId;
      if (method === 'notifications/cancelled' && (typeof requestId === 'string' || typeof requestId === 'number')) {
        const call = this.#calls.get(requestId);
        if (call !== undefined) {
          this.#calls.delete(requestId);
          this.#engine.cancel(call.owner, call.taskId).catch((error: unknown) => {
            this.#logger.debug('cancel by notification failed', { taskId: call.taskId, error: String(error) });
          });
        }
      }
      inner?.(message, extra);
    };
  }
}
