/**
 * The child process of a stdio server, with newline-delimited JSON-RPC framing (the MCP stdio
 * transport), ended as the SDK's `StdioClientTransport` ends it (close stdin, SIGTERM after a grace
 * period, then SIGKILL), but signalling the child's whole process GROUP: a server started through a
 * launcher (`npx -y pkg`, a shell script) is a grandchild, and the SDK's `kill(pid)` reached only the
 * launcher, leaving the server orphaned and holding our pipes, so the CLI never exited (issue 11,
 * defect 5). The child is spawned `detached` so it leads its own group (POSIX); on Windows only the
 * child itself is signalled.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Socket } from 'node:net';
import { getDefaultEnvironment, type StdioServerParameters } from '@modelcontextprotocol/client/stdio';
import type { Clock } from '../../core/ports.js';
import { guardedCommand, parseGuardReport } from './stdio-guard.js';

export interface StdioProcessOptions {
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  readonly stderr?: StdioServerParameters['stderr'];
  readonly clock: Clock;
  /** Each step of the shutdown waits this long for the exit (ms); default 2 000, as the SDK. */
  readonly graceMs?: number;
  /**
   * The server's process group ends when this process ends, even by SIGKILL (POSIX): the server is
   * started under a small guard that watches a pipe only this process holds (`stdio-guard.ts`).
   * Costs one more `node` process per server. Default false.
   */
  readonly endWithParent?: boolean;
}

export interface StdioProcess {
  readonly pid: number | undefined;
  /** Called once per complete JSON message; a line that is not JSON is dropped. */
  onmessage: ((message: unknown) => void) | undefined;
  /** The process exited (by itself or after `close()`). */
  onclose: ((reason: string) => void) | undefined;
  send(message: unknown): Promise<void>;
  /** stdin end, then SIGTERM to the group after `graceMs`, then SIGKILL; resolves once it exited. */
  close(): Promise<void>;
}

const DEFAULT_GRACE_MS = 2_000;
/** A line longer than this (64 MiB) is a broken server, not a message: it ends the connection. */
const MAX_BUFFER = 64 * 1024 * 1024;

/** Spawns the server; resolves once it runs, rejects if it cannot be started (ENOENT, say). */
export function startStdioProcess(options: StdioProcessOptions): Promise<StdioProcess> {
  const grace = options.graceMs ?? DEFAULT_GRACE_MS;
  const guarded = options.endWithParent === true && process.platform !== 'win32';
  const argv = guarded
    ? guardedCommand(options.command, options.args ?? [], grace)
    : { command: options.command, args: [...(options.args ?? [])] };
  const child: ChildProcess = spawn(argv.command, argv.args, {
    env: { ...getDefaultEnvironment(), ...options.env },
    stdio: ['pipe', 'pipe', options.stderr ?? 'inherit', ...(guarded ? (['pipe'] as const) : [])],
    shell: false,
    detached: process.platform !== 'win32',
    windowsHide: true,
    ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
  });
  /** The pieces of a line not ended yet. */
  let partial: string[] = [];
  let partialLength = 0;
  let exited = false;
  let closing = false;
  const exit = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const lifeline = guarded ? (child.stdio[3] as Socket | null) : null;

  const handle: StdioProcess = {
    pid: child.pid,
    onmessage: undefined,
    onclose: undefined,
    send: (message) =>
      new Promise<void>((resolve, reject) => {
        const stdin = child.stdin;
        if (exited || stdin === null || stdin.destroyed) {
          reject(new Error('server process is not running'));
          return;
        }
        if (stdin.write(`${JSON.stringify(message)}\n`, (error) => (error == null ? undefined : reject(error)))) {
          resolve();
        } else stdin.once('drain', () => resolve());
      }),
    async close() {
      closing = true;
      if (!exited) {
        child.stdin?.end();
        if (!(await exitedWithin(exit, grace, options.clock))) {
          signal(child, 'SIGTERM');
          if (!(await exitedWithin(exit, grace, options.clock))) {
            signal(child, 'SIGKILL');
            await exit;
          }
        }
      }
      // The leader is gone; what it started is not necessarily (a launcher's server): end the group.
      signal(child, 'SIGTERM');
      // A descendant that survived (it ignored every signal) must not hold our pipes open.
      child.stdout?.destroy();
      child.stdin?.destroy();
      lifeline?.destroy();
    },
  };

  child.stdout?.setEncoding('utf8');
  const deliver = (raw: string): void => {
    const line = raw.replace(/\r$/, '');
    if (line.trim() === '') return;
    let message: unknown;
    try {
      message = JSON.parse(line);
    } catch {
      message = undefined;
    }
    if (message !== undefined) handle.onmessage?.(message);
  };
  // Only each new chunk is searched for the end of a line, and a long line's pieces are joined once:
  // searching the whole buffer again at every chunk cost 290 ms of event loop for one 5 MB line.
  child.stdout?.on('data', (chunk: string) => {
    let start = 0;
    let newline = chunk.indexOf('\n');
    while (newline >= 0) {
      const line =
        partial.length === 0 ? chunk.slice(start, newline) : [...partial, chunk.slice(start, newline)].join('');
      partial = [];
      partialLength = 0;
      deliver(line);
      start = newline + 1;
      newline = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) {
      partial.push(chunk.slice(start));
      partialLength += chunk.length - start;
      if (partialLength > MAX_BUFFER) {
        partial = [];
        partialLength = 0;
        void handle.close();
      }
    }
  });
  // Write errors after the child died (EPIPE) surface as `lost` requests, not as crashes.
  child.stdin?.on('error', () => undefined);
  child.stdout?.on('error', () => undefined);
  lifeline?.on('error', () => undefined);
  child.once('exit', (code, sig) => {
    exited = true;
    if (!closing) {
      // Ended by itself: whatever it started (a launcher's server, a guard's) goes with it, and no
      // descendant keeps our pipes, so nothing outlives the connection.
      signal(child, 'SIGTERM');
      child.stdin?.destroy();
      lifeline?.destroy();
    }
    handle.onclose?.(sig !== null ? `server process ended by ${sig}` : `server process exited (code ${String(code)})`);
  });

  return new Promise((resolve, reject) => {
    child.once('error', (error) => {
      exited = true;
      reject(error);
    });
    if (lifeline === null) {
      child.once('spawn', () => resolve(handle));
      return;
    }
    // Under the guard, the server runs once the guard says so (or could not be started: ENOENT).
    let line = '';
    const onData = (chunk: Buffer): void => {
      line += chunk.toString('utf8');
      const newline = line.indexOf('\n');
      if (newline < 0) return;
      lifeline.off('data', onData);
      const report = parseGuardReport(line.slice(0, newline));
      if (report !== null && 'spawned' in report) resolve(handle);
      else reject(new Error(report === null ? 'the stdio guard did not start the server' : report.error));
    };
    lifeline.on('data', onData);
    void exit.then(() => reject(new Error('the server process exited before it started')));
  });
}

/** The child and, where it leads a group, every process it started. */
function signal(child: ChildProcess, name: NodeJS.Signals): void {
  try {
    if (process.platform !== 'win32' && child.pid !== undefined) process.kill(-child.pid, name);
    else child.kill(name);
  } catch {
    // Already gone.
  }
}

async function exitedWithin(exit: Promise<void>, ms: number, clock: Clock): Promise<boolean> {
  const stop = new AbortController();
  const timedOut = clock.sleep(ms, stop.signal).then(
    () => false,
    () => false,
  );
  const done = await Promise.race([exit.then(() => true), timedOut]);
  stop.abort();
  return done;
}
