/**
 * Where the CLI keeps its files, and the checks that turn a bad path into one line a person can act
 * on before SQLite or a retry loop sees it.
 */
import { constants, statfsSync } from 'node:fs';
import { access, mkdir, open, stat } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { isTerminusError } from '../core/errors.js';

/**
 * The default ledger: `$TERMINUS_LEDGER`, else `$XDG_STATE_HOME/terminus/ledger.db`, else
 * `~/.local/state/terminus/ledger.db` (XDG Base Directory: state that outlives a run but is not
 * config). One place per user, so `terminus ops` finds every call from any folder.
 */
export function defaultLedgerPath(env: NodeJS.ProcessEnv = process.env): string {
  const override = env.TERMINUS_LEDGER;
  if (override !== undefined && override !== '') return override;
  const state = env.XDG_STATE_HOME;
  // XDG: a relative XDG_STATE_HOME is invalid and must be ignored.
  const base = state !== undefined && state.startsWith('/') ? state : join(homedir(), '.local', 'state');
  return join(base, 'terminus', 'ledger.db');
}

/** A path the CLI cannot use; the message is the whole line a person sees. */
export class PathError extends Error {
  override readonly name = 'PathError';
}

const reason = (error: unknown): string => {
  const e = error as { code?: unknown; message?: unknown };
  const code = typeof e.code === 'string' ? e.code : 'error';
  const text = typeof e.message === 'string' ? e.message.replace(/^[A-Z]+: /, '').replace(/, \w+ '.*'$/, '') : '';
  return text === '' ? code : `${code}: ${text}`;
};

/**
 * Creates `dir` and its missing parents one `mkdir` at a time. Node's `mkdir({ recursive: true })`
 * never returns for a path under `/proc` on Node 20 (it retries the parent forever), so each level
 * is made separately and the first refusal is reported. Folders it makes get `mode` (umask applied).
 */
export async function ensureDir(dir: string, what: string, mode?: number): Promise<void> {
  const missing: string[] = [];
  let current = resolve(dir);
  for (;;) {
    try {
      const info = await stat(current);
      if (!info.isDirectory()) throw new PathError(`${what}: ${current} is not a folder; pass another path`);
      break;
    } catch (error) {
      if (error instanceof PathError) throw error;
      if ((error as { code?: unknown }).code !== 'ENOENT') {
        throw new PathError(`${what}: cannot use ${current} (${reason(error)}); pass another path`);
      }
      missing.unshift(current);
      const parent = dirname(current);
      if (parent === current) break;
      current = parent;
    }
  }
  for (const folder of missing) {
    try {
      await mkdir(folder, mode === undefined ? undefined : { mode });
    } catch (error) {
      if ((error as { code?: unknown }).code === 'EEXIST') continue;
      throw new PathError(`${what}: cannot create the folder ${folder} (${reason(error)}); pass another path`);
    }
  }
}

/**
 * Checks that a SQLite file can be opened for writing before SQLite opens it: its folder exists or
 * can be made, and the file (when it exists) opens read-write. SQLite itself opens a read-only file
 * quietly and fails only at the first write, with no path in its message.
 */
export async function checkWritableFile(path: string, what: string, dirMode?: number): Promise<void> {
  await ensureDir(dirname(path), what, dirMode);
  let exists = true;
  try {
    await access(path, constants.F_OK);
  } catch {
    exists = false;
  }
  if (!exists) return;
  try {
    const handle = await open(path, 'r+');
    await handle.close();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    const why = code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'read-only' : 'cannot be opened';
    throw new PathError(`${what} ${path} ${why} (${reason(error)}): make it writable or pass another path`);
  }
}

/**
 * One line for an error SQLite raised while opening `path` (`cause` chains are followed). A damaged
 * database is not moved aside or replaced on advice: what it holds is only there (for a ledger,
 * the operations whose calls would otherwise be submitted again).
 */
export function sqliteOpenMessage(path: string, what: 'ledger' | 'database', error: unknown): string | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    // The start-up check (not a database, a failed quick_check, a missing table) already names the
    // file and the cause; add what a person can do about it.
    if (isTerminusError(e, 'storage_damaged')) return `${what} ${e.message}: ${damageAdvice(path, what, e.details)}`;
    const code = (e as { code?: unknown }).code;
    if (code === 'SQLITE_READONLY' || code === 'SQLITE_PERM') {
      return `${what} ${path} is read-only (${String(code)}): make it writable or pass another path`;
    }
    if (code === 'SQLITE_CANTOPEN') {
      return `${what} ${path} cannot be opened (${String(code)}): check the path and its folder's permissions`;
    }
  }
  return undefined;
}

function damageAdvice(path: string, what: 'ledger' | 'database', details: Record<string, unknown> | undefined): string {
  if (details?.damage !== 'corrupt') return 'pass another path or move the file away';
  const held = what === 'ledger' ? 'operations' : 'tasks';
  const again = what === 'ledger' ? ', and a call made again is then submitted again' : '';
  return (
    `keep the file: its ${held} are only there, and \`sqlite3 ${path} .dump\` prints the rows it can still read ` +
    `(docs/operations.md, "Damaged storage"); another path starts without them${again}`
  );
}

/**
 * For an error SQLite raised writing `path` (a full disk is SQLITE_FULL, or an I/O error when not
 * even its shared-memory file fits): `; FOLDER has N bytes free`, with what to do when nearly
 * nothing is; '' for any other error or where the folder cannot be asked.
 */
export function diskNote(path: string, error: unknown): string {
  let code = '';
  for (let e: unknown = error; e instanceof Error && code === ''; e = e.cause) {
    const own = (e as { code?: unknown }).code;
    if (typeof own === 'string' && own.startsWith('SQLITE_')) code = own;
  }
  if (code !== 'SQLITE_FULL' && !code.startsWith('SQLITE_IOERR')) return '';
  const folder = dirname(resolve(path));
  try {
    const fs = statfsSync(folder);
    const free = fs.bavail * fs.bsize;
    return `; ${folder} has ${free} bytes free${free < 1024 * 1024 ? ': free some space, then run the command again' : ''}`;
  } catch {
    return '';
  }
}
