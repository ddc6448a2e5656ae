/**
 * The console's sign-in sessions: a browser cannot send a bearer header, so a person signs in with
 * the token once and the server keeps the principal under a random session id, sent back as a
 * cookie. Sessions live in this process's memory only (a restart signs everyone out), bounded in
 * number and in lifetime. The store keeps each id's SHA-256, never the id itself; each session has
 * its own CSRF token for the console's forms.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { AuthInfo } from '@modelcontextprotocol/server';

/** Sign-in sessions kept at once; the oldest goes when a new one would pass it. */
export const DEFAULT_MAX_SESSIONS = 1000;
/** A session's lifetime: a working day. A JWT that expires sooner ends its session sooner. */
export const DEFAULT_SESSION_TTL_MS = 8 * 60 * 60 * 1000;

/** One signed-in browser. */
export interface ConsoleSession {
  /** The principal the token stood for when it was verified: the owner of what the session sees (S8). */
  readonly authInfo: AuthInfo;
  /** The token every form of this session carries (a page of another site cannot read it). */
  readonly csrf: string;
  readonly createdAt: number;
  readonly expiresAt: number;
}

export interface SessionStoreOptions {
  readonly maxSessions?: number;
  readonly ttlMs?: number;
  /** Milliseconds since the epoch; default `Date.now` (the console is an edge, not the core). */
  readonly now?: () => number;
}

/** 256 random bits, URL-safe: a session id or a CSRF token. */
function secret(): string {
  return randomBytes(32).toString('base64url');
}

function digest(id: string): string {
  return createHash('sha256').update(id, 'utf8').digest('base64url');
}

/** Compares two secrets in time that does not depend on where they differ. */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  return x.length === y.length && timingSafeEqual(x, y);
}

export class SessionStore {
  private readonly sessions = new Map<string, ConsoleSession>();
  private readonly max: number;
  private readonly ttlMs: number;
  readonly now: () => number;

  constructor(options: SessionStoreOptions = {}) {
    this.max = Math.max(1, options.maxSessions ?? DEFAULT_MAX_SESSIONS);
    this.ttlMs = options.ttlMs ?? DEFAULT_SESSION_TTL_MS;
    this.now = options.now ?? Date.now;
  }

  /** A new session for `authInfo`: its id (for the cookie, never stored here) and the session. */
  create(authInfo: AuthInfo): { readonly id: string; readonly session: ConsoleSession } {
    const now = this.now();
    // `AuthInfo.expiresAt` is in seconds: a session never outlives the token it was opened with.
    const tokenEnd = authInfo.expiresAt === undefined ? Infinity : authInfo.expiresAt * 1000;
    const session: ConsoleSession = {
      authInfo,
      csrf: secret(),
      createdAt: now,
      expiresAt: Math.min(now + this.ttlMs, tokenEnd),
    };
    this.sweep(now);
    // Full of live sessions: the oldest goes (Map keeps insertion order, which is creation order).
    while (this.sessions.size >= this.max) {
      const oldest = this.sessions.keys().next().value;
      if (oldest === undefined) break;
      this.sessions.delete(oldest);
    }
    const id = secret();
    this.sessions.set(digest(id), session);
    return { id, session };
  }

  /** The live session of `id`, or undefined (unknown, expired: an expired one is forgotten). */
  get(id: string): ConsoleSession | undefined {
    const key = digest(id);
    const session = this.sessions.get(key);
    if (session === undefined) return undefined;
    if (session.expiresAt <= this.now()) {
      this.sessions.delete(key);
      return undefined;
    }
    return session;
  }

  /** Signs a session out; unknown ids are no error. */
  delete(id: string): void {
    this.sessions.delete(digest(id));
  }

  get size(): number {
    return this.sessions.size;
  }

  private sweep(now: number): void {
    for (const [key, session] of this.sessions) if (session.expiresAt <= now) this.sessions.delete(key);
  }
}
