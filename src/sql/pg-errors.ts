import { TerminusError } from '../core/errors.js';

/**
 * SQLSTATE classes and node error codes that mean "the database is not reachable right now":
 * connection exceptions (08), shutdowns and "cannot connect now" (57P01..57P03), too many
 * connections and other insufficient resources (53).
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03']);
const UNAVAILABLE_NODE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'ENOENT', // a unix socket path that does not exist
]);
// pg raises these as plain Errors without a code; matching the text is the only way to tell them.
const UNAVAILABLE_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
];

/** Serialization failure and deadlock: the transaction may simply be run again. */
export function isRetryableConflict(error: unknown): boolean {
  const code = sqlState(error);
  return code === '40001' || code === '40P01';
}

export function sqlState(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isUnavailable(error: unknown): boolean {
  const code = sqlState(error);
  if (code !== undefined) {
    if (code.startsWith('08') || code.startsWith('53') || UNAVAILABLE_SQLSTATES.has(code)) return true;
    if (UNAVAILABLE_NODE_CODES.has(code)) return true;
  }
  if (error instanceof AggregateError) return error.errors.some(isUnavailable);
  const message = error instanceof Error ? error.message : '';
  return UNAVAILABLE_MESSAGES.some((m) => message.includes(m));
}

/**
 * Turns whatever `pg` threw into a `TerminusError` callers can branch on by `code`; a
 * `TerminusError` passes through unchanged. `where` names the operation for the message.
 */
export function mapError(error: unknown, where: string): TerminusError {
  if (error instanceof TerminusError) return error;
  const detail = describe(error);
  if (isUnavailable(error)) {
    return new TerminusError('unavailable', `PostgreSQL is unavailable (${where}): ${detail}`, { cause: error });
  }
  const code = sqlState(error);
  // NUL characters: jsonb and text refuse them (SQLite and memory accept them).
  if (code === '22P05' || code === '22021') {
    return new TerminusError('invalid_argument', `value not storable in PostgreSQL (${where}): ${detail}`, {
      cause: error,
    });
  }
  return new TerminusError('internal', `PostgreSQL error (${where}): ${detail}`, { cause: error });
}

export function describe(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map(describe).join('; ');
  }
  if (error instanceof Error) {
    const code = sqlState(error);
    const message = error.message === '' ? error.name : error.message;
    return code === undefined || message.includes(code) ? message : `${message} [${code}]`;
  }
  return String(error);
}
