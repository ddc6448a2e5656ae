/**
 * One error class for the whole project. Callers branch on `code`, never on a message; wire errors
 * (JSON-RPC codes, HTTP + google.rpc.Status) are made from the code at the edge only.
 */
export const ERROR_CODES = [
  /** Unknown, foreign, expired or malformed id: one code for all so ids cannot be probed (S8). */
  'not_found',
  'invalid_argument',
  /** A fenced write whose lease or epoch is no longer current (S3). */
  'lease_lost',
  /** Same submission key, different request digest (S5). */
  'submission_key_conflict',
  /** The key was looked up before any task used it: "never created" is final (S6). */
  'submission_key_burned',
  /** An unauthenticated caller's submission key is guessable (issue 12: under 128 bits by its form). */
  'submission_key_too_weak',
  'already_terminal',
  'capability_required',
  /** No or a bad credential on a server that requires one; `details.challenge` is the WWW-Authenticate. */
  'unauthenticated',
  'wire_disabled',
  'unavailable',
  'internal',
  /** A store refused to open: its file is not a database, fails its integrity check or lacks tables. */
  'storage_damaged',
  /** A limit refused the request (rate, tasks per caller); `details`: reason, limit, retryAfterMs. */
  'resource_exhausted',
  /** Executor ledger: the record's revision moved since it was loaded; reload and step again. */
  'revision_conflict',
  /** Executor ledger: `acceptTerminal` found a field that does not match the stored operation (C1, C2). */
  'acceptance_mismatch',
  /** Executor ledger: a call node or submission key already belongs to a different operation (C5). */
  'operation_conflict',
] as const;
export type ErrorCode = (typeof ERROR_CODES)[number];

const RETRYABLE: ReadonlySet<ErrorCode> = new Set(['unavailable', 'resource_exhausted']);

/**
 * The one error class of the library: a string `code` (`ERROR_CODES`), `retryable` for codes a
 * caller may retry (`unavailable`), and `details`. Wire errors are made from it at the edge.
 * @example
 * throw new TerminusError('invalid_argument', 'pages must be positive', { details: { pages } });
 */
export class TerminusError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: { cause?: unknown; details?: Record<string, unknown> } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'TerminusError';
    this.code = code;
    this.retryable = RETRYABLE.has(code);
    this.details = options.details;
  }
}

/**
 * Narrows `e` to a `TerminusError`, of `code` when given.
 * @example
 * try { await engine.get(owner, id); } catch (error) { if (isTerminusError(error, 'not_found')) return null; throw error; }
 */
export function isTerminusError(e: unknown, code?: ErrorCode): e is TerminusError {
  return e instanceof TerminusError && (code === undefined || e.code === code);
}

/** The single "not found" used for unknown, foreign, expired and malformed ids (S8). */
export function taskNotFound(): TerminusError {
  return new TerminusError('not_found', 'Task not found');
}

export function leaseLost(taskId: string, epoch: number): TerminusError {
  return new TerminusError('lease_lost', `lease lost for task ${taskId} at epoch ${epoch}`, {
    details: { taskId, epoch },
  });
}
