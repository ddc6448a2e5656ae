import { TerminusError } from '../core/errors.js';

/** Position after the last task of a page; pages run newest first by `(createdAt, id)`. */
export interface ListPosition {
  readonly createdAt: number;
  readonly id: string;
}

/** Opaque to callers: base64url of `[createdAt, id]`. */
export function encodeCursor(position: ListPosition): string {
  return Buffer.from(JSON.stringify([position.createdAt, position.id])).toString('base64url');
}

/** Rejects `invalid_argument` for anything this store did not hand out. */
export function decodeCursor(cursor: string): ListPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && Number.isSafeInteger(value[0]) && typeof value[1] === 'string') {
      return { createdAt: value[0] as number, id: value[1] };
    }
  } catch {
    // fall through: a malformed cursor is the caller's error, not ours
  }
  throw new TerminusError('invalid_argument', 'malformed cursor');
}

/** `limit` clamped to 1..1000 as the port promises. */
export function clampLimit(limit: number): number {
  if (!Number.isFinite(limit)) return 1000;
  return Math.min(1000, Math.max(1, Math.floor(limit)));
}

/** Newest first: true when `a` sorts before `b`. */
export function newerThan(a: ListPosition, b: ListPosition): boolean {
  return a.createdAt > b.createdAt || (a.createdAt === b.createdAt && a.id > b.id);
}
