/**
 * The credential a command's `--token` and `--header` carry, and what a person is told when a server
 * refuses it (HTTP 401/403) or an operation of the ledger belongs to another one. The executor keeps
 * a salted fingerprint of it with each operation (`executor/identity.ts`); a resume under another
 * credential is refused before anything is sent, since the server would answer the task as not found
 * (S8) and that answer proves nothing.
 */
import { ExecutorError } from '../executor/executor-types.js';
import type { ToolOperation } from '../executor/operation.js';
import { WireFailure } from '../executor/wire-port.js';
import { credentialOf } from '../executor/identity.js';

export { credentialOf };

/** The credential of `headers` for `server`: none for a stdio server (headers go to HTTP servers only). */
export function serverCredential(server: string, headers: Readonly<Record<string, string>>): string | null {
  return server.startsWith('stdio:') ? null : credentialOf(headers);
}

/** A failure that is about the credentials: the server refused them, or the operation is another's. */
export function isCredentialFailure(error: unknown): boolean {
  if (error instanceof ExecutorError) return error.code === 'unauthorized' || error.code === 'identity_mismatch';
  if (error instanceof WireFailure && error.kind === 'unauthorized') return true;
  const status = (error as { httpStatus?: unknown } | null)?.httpStatus;
  return status === 401 || status === 403;
}

const PASS = "--token T (or TERMINUS_TOKEN) or --header 'Authorization: …'";

/** What the person at the CLI needs to know and do about a credential failure. */
export interface CredentialContext {
  /** The command has a credential (`credentialOf` of its headers is not null). */
  readonly hasCredential: boolean;
  /** The server the operation talks to, when known. */
  readonly server?: string | undefined;
  /** `terminus call` offers `--new`; `ops` commands offer `--credential-changed`. */
  readonly command: 'call' | 'ops';
}

/**
 * One message for a credential failure (`isCredentialFailure`): what was refused, which flag to pass,
 * and that the operation was not changed by it (a refused submission is proven never created).
 */
export function credentialMessage(error: unknown, record: ToolOperation | null, context: CredentialContext): string {
  const server = record?.server ?? context.server ?? 'the server';
  if (error instanceof ExecutorError && error.code === 'identity_mismatch') {
    const op = record === null ? 'the operation' : `operation ${record.id}`;
    const unchanged = `nothing was sent, the operation is unchanged (${record?.state ?? error.state ?? '?'})`;
    if (!context.hasCredential) {
      return `${op} was submitted with a credential and this command passes none: pass the same ${PASS}; ${unchanged}`;
    }
    const other =
      context.command === 'call'
        ? '--new starts an operation of your own'
        : 'if the same principal holds a new token, add --credential-changed';
    return `${op} was submitted under another credential than this command's --token/--header: pass the one it was submitted with; ${unchanged}; ${other}`;
  }
  const detail =
    error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : String(error);
  const what = `${server} refused the credentials (${detail}): pass ${PASS}${context.hasCredential ? ' that it accepts' : ''}`;
  if (record === null) return what;
  if (record.state === 'NEVER_CREATED') {
    return `${what}; nothing was created (operation ${record.id} is NEVER_CREATED): the same command with a credential starts a new one`;
  }
  return `${what}; the operation is unchanged (${record.state}): terminus ops resume ${record.id} with one follows it`;
}
