/**
 * The bridge's 2025-11-25 HTTP leg, sessionful. The SDK's default legacy leg builds a server per
 * request: it forgets a host's `initialize` capabilities (so `--front auto` could not see that it
 * declared `tasks`) and has no stream to push `notifications/tasks/status` on. This leg keeps one
 * SDK `Server` and `WebStandardStreamableHTTPServerTransport` per `Mcp-Session-Id`, built by the
 * bridge's own factory, so a 2025 host over HTTP gets what it gets over stdio:
 * - `initialize` without a session header opens a session (at most `maxSessions`: past it the
 *   least recently used one is closed);
 * - a request naming a session goes to it: 404 for an unknown one, or for a caller (Authorization)
 *   other than the one that opened it (its tasks are that caller's);
 * - a session idle for `idleMs` is closed (the host gets 404 and initializes again);
 * - any other session-less request is served statelessly, as before.
 */
import { randomUUID } from 'node:crypto';
import {
  legacyStatelessFallback,
  Server,
  WebStandardStreamableHTTPServerTransport,
  type McpServerFactory,
} from '@modelcontextprotocol/server';
import type { Logger } from '../core/ports.js';

export interface LegacySessionsOptions {
  readonly factory: McpServerFactory;
  readonly logger: Logger;
  /** The caller a request speaks for (sessions are bound to it). */
  readonly ownerOf: (headers: Headers) => string;
  /** Called with each request that opens a session, before the factory builds its server. */
  readonly opening: (request: Request) => void;
  readonly maxSessions?: number;
  readonly idleMs?: number;
}

interface Session {
  readonly transport: WebStandardStreamableHTTPServerTransport;
  readonly server: Server;
  readonly owner: string;
  lastSeen: number;
}

/** Sessions open at once by default; past it the least recently used is closed. */
export const DEFAULT_MAX_SESSIONS = 100;
const DEFAULT_IDLE_MS = 3_600_000;

export class LegacySessions {
  private readonly sessions = new Map<string, Session>();
  private readonly stateless: ReturnType<typeof legacyStatelessFallback>;
  private readonly sweep: NodeJS.Timeout;

  constructor(private readonly options: LegacySessionsOptions) {
    this.stateless = legacyStatelessFallback(options.factory, (error) =>
      options.logger.debug('legacy stateless request rejected', { error: error.message }),
    );
    const idleMs = options.idleMs ?? DEFAULT_IDLE_MS;
    this.sweep = setInterval(
      () => {
        const now = Date.now();
        for (const [id, session] of [...this.sessions]) {
          if (now - session.lastSeen < idleMs) continue;
          this.sessions.delete(id);
          session.server.close().catch(() => undefined);
        }
      },
      Math.max(10, Math.min(60_000, idleMs / 4)),
    );
    this.sweep.unref();
  }

  /** Open sessions (for tests and operators). */
  get size(): number {
    return this.sessions.size;
  }

  async handle(request: Request): Promise<Response> {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId !== null) {
      const session = this.sessions.get(sessionId);
      if (session === undefined || session.owner !== this.options.ownerOf(request.headers)) return sessionNotFound();
      session.lastSeen = Date.now();
      // Kept in order of use (the map's order), so the least recently used one is first.
      this.sessions.delete(sessionId);
      this.sessions.set(sessionId, session);
      return session.transport.handleRequest(request);
    }
    if (request.method === 'POST' && (await isInitialize(request))) {
      // At the cap the least recently used session makes room: hosts rarely end their sessions
      // (a CLI run opens one and exits), and its host, if still there, gets 404 and initializes again.
      if (this.sessions.size >= (this.options.maxSessions ?? DEFAULT_MAX_SESSIONS)) this.evictOldest();
      return this.open(request);
    }
    return this.stateless(request);
  }

  private async open(request: Request): Promise<Response> {
    this.options.opening(request);
    const built = await this.options.factory({ era: 'legacy', requestInfo: request });
    const server = built instanceof Server ? built : built.server;
    const owner = this.options.ownerOf(request.headers);
    let id: string | undefined;
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (sessionId) => {
        id = sessionId;
        this.sessions.set(sessionId, { transport, server, owner, lastSeen: Date.now() });
      },
      onsessionclosed: (sessionId) => {
        this.sessions.delete(sessionId);
      },
    });
    await server.connect(transport);
    try {
      return await transport.handleRequest(request);
    } finally {
      // A refused initialize never gets a session: nothing of it may outlive the request.
      if (id === undefined) server.close().catch(() => undefined);
    }
  }

  private evictOldest(): void {
    const oldest = this.sessions.entries().next();
    if (oldest.done === true) return;
    const [id, session] = oldest.value;
    this.sessions.delete(id);
    session.server.close().catch(() => undefined);
  }

  async close(): Promise<void> {
    clearInterval(this.sweep);
    const open = [...this.sessions.values()];
    this.sessions.clear();
    await Promise.allSettled(open.map((s) => s.server.close()));
  }
}

async function isInitialize(request: Request): Promise<boolean> {
  try {
    const body = (await request.clone().json()) as { method?: unknown };
    return typeof body === 'object' && body !== null && body.method === 'initialize';
  } catch {
    return false;
  }
}

function sessionNotFound(): Response {
  const body = { jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Session not found' } };
  return new Response(JSON.stringify(body), { status: 404, headers: { 'content-type': 'application/json' } });
}
