/**
 * `terminus ops logs ID [--follow] [--after N] [--json]`: the task's own log (issue 18) of a ledger
 * operation, read from its server by cursor. Reading is no effect on the operation: no state
 * changes, no receipt, the ledger is only read.
 *
 * stdout: one line per log line (`log-lines.ts`), or with `--json` one JSON object per line (the
 * line as the server sent it) and a last object `{"next", "dropped", "status", "done"}`: its `next`
 * is the `--after` that goes on without repeating a line. stderr: markers of the end, retries and
 * errors. Exit codes as the other ops commands: 0 read (with `--follow`: to the end of the log), 1
 * no such operation, no task, or a server that keeps no logs, 2 usage, 3 `--follow` stopped before the
 * end (Ctrl-C).
 */
import { InvalidArgumentError } from 'commander';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import { createExecutor } from '../executor/executor.js';
import { ExecutorError } from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import { WireFailure } from '../executor/wire-port.js';
import { driveFailure } from './call-connect.js';
import { EXIT } from './call-outcome.js';
import { LogMarks } from './log-lines.js';
import { connectorOf, credentialCheck, type DriveFlags } from './ops-drive.js';
import { credentialMessage, credentialOf, isCredentialFailure } from './credential.js';
import { headersOf } from './server-flags.js';
import { findOperation, notFoundMessage } from './ops-find.js';

/** `ops logs` flags: the server flags of `ops resume`, plus `--follow` and `--after`. */
export interface LogsFlags extends DriveFlags {
  readonly follow: boolean;
  readonly after: number;
}

const out = (text: string): void => void process.stdout.write(text);
const err = (text: string): void => void process.stderr.write(text);

/** `--after N`: a seq (the `next` an earlier read printed). */
export function parseCursor(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('a line number (0 or more), as `next` printed it');
  return n;
}

/** `terminus ops logs ID`: prints the log and returns the exit code (see the file comment). */
export async function logs(ledger: Ledger, id: string, flags: LogsFlags): Promise<number> {
  const command = 'terminus ops logs';
  const found = await findOperation(ledger, id);
  if (found.kind !== 'one') {
    err(`${notFoundMessage(command, id, found)}\n`);
    return EXIT.failed;
  }
  const record = found.operation;
  let connect;
  try {
    connect = connectorOf(flags);
  } catch (error) {
    err(`${command}: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  const executor = await createExecutor({
    ledger,
    connect,
    ...credentialCheck(flags),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
  });
  const stop = new AbortController();
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    if (interrupts > 1) process.exit(EXIT.detached);
    stop.abort();
  };
  process.on('SIGINT', onSigint);
  const follower = executor.logs(record.id, {
    after: flags.after,
    follow: flags.follow,
    signal: stop.signal,
    onRetry: (failure, retryInMs) =>
      err(
        `${command}: ${failure.kind} reading the log (${failure.message}); retrying in ${Math.ceil(retryInMs / 1000)} s\n`,
      ),
  });
  const marks = new LogMarks(flags.after);
  let count = 0;
  try {
    for await (const line of follower) {
      count += 1;
      if (flags.json) {
        out(`${JSON.stringify(line)}\n`);
        continue;
      }
      const { markers, text } = marks.render(line);
      for (const marker of markers) out(`${marker}\n`);
      out(`${text}\n`);
    }
  } catch (error) {
    if (isCredentialFailure(error)) {
      const hasCredential = credentialOf(headersOf(flags)) !== null;
      err(`${command}: ${credentialMessage(error, record, { hasCredential, command: 'ops' })}\n`);
      return EXIT.unauthorized;
    }
    err(`${command}: ${explain(record.id, record.server, flags.ledger, error)}\n`);
    return EXIT.failed;
  } finally {
    process.off('SIGINT', onSigint);
    await executor.close();
  }
  const cursor = { next: follower.next, dropped: follower.dropped, status: follower.status, done: follower.done };
  if (flags.json) out(`${JSON.stringify(cursor)}\n`);
  const again = `terminus ops logs ${record.id} --after ${follower.next}${flags.follow ? ' --follow' : ''}`;
  const dropped = follower.dropped > 0 ? `; ${follower.dropped} oldest line(s) dropped by the server's bound` : '';
  if (follower.done) err(`-- end of log (task ${follower.status}); ${count} line(s) read${dropped} --\n`);
  else if (stop.signal.aborted) err(`-- stopped following after line ${follower.next}${dropped}; go on: ${again} --\n`);
  else
    err(`-- caught up at line ${follower.next} (task ${follower.status ?? '?'})${dropped}; more later: ${again} --\n`);
  return flags.follow && !follower.done ? EXIT.detached : EXIT.completed;
}

/** One line for a read that cannot go on. */
function explain(operationId: string, server: string | undefined, ledger: string, error: unknown): string {
  if (error instanceof ExecutorError) return `operation ${operationId}: ${error.message}`;
  if (error instanceof WireFailure)
    return `operation ${operationId}: the server refused the log read: ${error.message}`;
  return driveFailure(server, ledger, error);
}
