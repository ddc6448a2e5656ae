/**
 * The `terminus ops` commands that talk to servers: `resume [ID]` follows one in-flight operation
 * (or every one) to its receipt with a fresh wait budget (C11), `cancel ID` requests a cancel (C8)
 * and waits for the server to confirm it. Ctrl-C stops following (C9); a second one exits at once.
 */
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import type { WireChoice } from '../executor/adapters/index.js';
import { createExecutor } from '../executor/executor.js';
import { ExecutorError, type Connector, type Executor, type OperationHandle } from '../executor/executor-types.js';
import type { Ledger, Receipt } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import type { TaskSnapshot } from '../executor/wire-port.js';
import { IN_FLIGHT_STATES, isSettled } from '../executor/transitions.js';
import { checkIdentity } from '../executor/identity.js';
import { cliConnector, driveFailure, urlDescriptor } from './call-connect.js';
import { credentialMessage, credentialOf, isCredentialFailure, serverCredential } from './credential.js';
import {
  EXIT,
  flagsOf,
  followFailure,
  noReceipt,
  printOutcome,
  receiptOutcome,
  refusal,
  unknownMessage,
  type CallOutcome,
} from './call-outcome.js';
import { attachTo, completeProgress, progressView, stateView, StatusLog } from './follow.js';
import { findOperation, notFoundMessage } from './ops-find.js';
import { PromptGate, type StatusShown } from './approval.js';
import { ProgressDisplay, type ProgressView } from './render.js';
import { headersOf, type ServerFlags } from './server-flags.js';

export interface DriveFlags extends ServerFlags {
  readonly ledger: string;
  readonly json: boolean;
  readonly url?: string;
  readonly wire: WireChoice;
  readonly budget?: number;
  /** Drive operations submitted under another credential (a rotated token of the same principal). */
  readonly credentialChanged?: boolean;
}

const LIST_LIMIT = 10_000;
const out = (text: string): void => void process.stdout.write(text);
const err = (text: string): void => void process.stderr.write(text);

/** Outcomes of `resume` rows the credentials decided (exit 4). */
const CREDENTIAL_OUTCOMES: readonly string[] = ['unauthorized', 'identity_mismatch'];

/** One row of what `resume` reports. */
interface Row {
  readonly operationId: string;
  readonly callNodeId: string;
  readonly outcome: string;
  readonly receiptId: string | null;
}

class DriveError extends Error {}

/**
 * The connector the flags ask for: the stored server, or `--url` instead; a bad URL throws a one-line
 * error. `onSnapshot` sees what the server says in each answer: the progress shown (as in `terminus
 * call`), since the statuses carry the ledger's copy, the last one an earlier run saw.
 */
export function connectorOf(flags: DriveFlags, onSnapshot?: (snapshot: TaskSnapshot) => void): Connector {
  const connect = cliConnector({
    clock: systemClock,
    wire: flags.wire,
    headers: headersOf(flags),
    ...(onSnapshot === undefined ? {} : { onSnapshot }),
  });
  if (flags.url === undefined) return connect;
  let url: string;
  try {
    url = urlDescriptor(flags.url);
  } catch (error) {
    throw new DriveError((error as Error).message);
  }
  return (_server, wire) => connect(url, wire);
}

/** Runs `body` with an executor on the ledger, an approval gate on stdin, and Ctrl-C handling. */
async function withExecutor(
  ledger: Ledger,
  flags: DriveFlags,
  command: string,
  body: (executor: Executor, follow: (h: OperationHandle) => void, interrupted: () => boolean) => Promise<number>,
  onSnapshot: (snapshot: TaskSnapshot) => void,
  display?: ProgressDisplay,
  /** The status log of several operations, held while a question is asked (no redrawn line then). */
  log?: StatusShown,
): Promise<number> {
  // Above the redrawn status line when there is one, not through it.
  const say = (line: string): void => (display === undefined ? err(`${line}\n`) : display.note(line));
  const what = display === undefined ? 'the tasks keep running' : 'the task keeps running';
  let connect: Connector;
  try {
    connect = connectorOf(flags, onSnapshot);
  } catch (error) {
    err(`${command}: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  const followed: OperationHandle[] = [];
  const shown = display ?? log;
  const gate = new PromptGate({
    ...(shown === undefined ? {} : { display: shown }),
    header: (r) => `${r.tool} asks for input (operation ${r.operationId}, round ${r.round})`,
    // `[c]ancel` at a prompt cancels that operation's task; the question stays unanswered.
    cancelTask: (operationId) => {
      const handle = followed.find((h) => h.operationId === operationId);
      if (handle === undefined) return false;
      say(`[c]ancel: cancel requested for ${operationId}; waiting for the server`);
      handle.cancel().catch((error: unknown) => say(`cancel failed: ${String(error)}`));
      return true;
    },
  });
  const executor = await createExecutor({
    ledger,
    connect,
    ...credentialCheck(flags),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
    approvalGate: gate.ask,
    resubmitNeverCreated: false,
    ...(flags.budget === undefined ? {} : { defaultBudgetMs: flags.budget * 1000 }),
  });
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    gate.interrupt();
    if (interrupts > 1) {
      display?.stop();
      err('Ctrl-C again: exiting now; the operations stay in the ledger\n');
      process.exit(EXIT.detached);
    }
    say(`Ctrl-C: stopped following; ${what} (Ctrl-C again exits now)`);
    for (const handle of followed) void handle.detach();
  };
  process.on('SIGINT', onSigint);
  try {
    return await body(
      executor,
      (handle) => {
        followed.push(handle);
        if (interrupts > 0) void handle.detach();
      },
      () => interrupts > 0,
    );
  } finally {
    process.off('SIGINT', onSigint);
    gate.close();
    await executor.close();
  }
}

/**
 * The executor's `credentialOf` for these flags: the command's credential, checked against the one
 * each operation was submitted under; none with `--credential-changed` (nothing is checked).
 */
export function credentialCheck(flags: DriveFlags): { credentialOf?: (server: string) => string | null } {
  if (flags.credentialChanged === true) return {};
  const headers = headersOf(flags);
  return { credentialOf: (server) => serverCredential(server, headers) };
}

/** The advice of a credential failure of these flags, for `record`. */
function credentialAdvice(error: unknown, record: ToolOperation | null, flags: DriveFlags): string {
  return credentialMessage(error, record, { hasCredential: credentialOf(headersOf(flags)) !== null, command: 'ops' });
}

async function settle(handle: OperationHandle): Promise<{ receipt: Receipt | null; outcome: string; error?: unknown }> {
  try {
    const receipt = await handle.result();
    return { receipt, outcome: receipt.status };
  } catch (error) {
    return { receipt: null, outcome: error instanceof ExecutorError ? error.code : String(error), error };
  }
}

function report(rows: readonly Row[], flags: DriveFlags): void {
  if (flags.json) return out(`${JSON.stringify({ operations: rows })}\n`);
  if (rows.length === 0) return out('nothing in flight\n');
  const header = ['OPERATION', 'CALL NODE', 'OUTCOME', 'RECEIPT'];
  const cells = rows.map((r) => [r.operationId, r.callNodeId, r.outcome, r.receiptId ?? '-']);
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: readonly string[]): string =>
    c
      .map((x, i) => x.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  out(`${[line(header), ...cells.map(line)].join('\n')}\n`);
}

/** Finds exactly one operation or writes why not. */
async function one(ledger: Ledger, id: string, command: string): Promise<ToolOperation | null> {
  const found = await findOperation(ledger, id);
  if (found.kind === 'one') return found.operation;
  err(`${notFoundMessage(command, id, found)}\n`);
  return null;
}

/** `ops resume [ID]`: exit 0 when every operation followed has a receipt (or was never created), else 3. */
export async function resume(ledger: Ledger, id: string | undefined, flags: DriveFlags): Promise<number> {
  const command = 'terminus ops resume';
  let target: ToolOperation | null = null;
  if (id !== undefined) {
    target = await one(ledger, id, command);
    if (target === null) return EXIT.failed;
    if (isSettled(target.state)) {
      err(`operation ${target.id} has already ended (${target.state})\n`);
      const receipt = await ledger.getReceipt(target.callNodeId);
      const outcome =
        receipt !== null
          ? receiptOutcome(receipt, target, true)
          : target.state === 'NEVER_CREATED'
            ? noReceipt('refused', EXIT.failed, target, true, refusal(target))
            : noReceipt('error', EXIT.failed, target, true, `it ended ${target.state} without a receipt`);
      printOutcome(outcome, flags.json, command);
      return outcome.exitCode;
    }
  }
  if (target !== null) return resumeOne(ledger, target, flags);
  // Each task's progress as its server last answered (the statuses carry the ledger's copy).
  const progress = new Map<string, ProgressView>();
  const log = new StatusLog(process.stderr, (taskId) => progress.get(taskId));
  return withExecutor(
    ledger,
    flags,
    command,
    async (executor, follow) => {
      const before = await ledger.listByState(IN_FLIGHT_STATES, LIST_LIMIT);
      let handles: OperationHandle[];
      try {
        handles = await executor.resume();
      } catch (error) {
        err(`${command}: ${driveFailure(undefined, flags.ledger, error)}\n`);
        return EXIT.failed;
      }
      handles.forEach(follow);
      const watching = Promise.all(handles.map((h) => log.follow(h, Date.now)));
      const failures = new Map<string, unknown>();
      const rows: Row[] = await Promise.all(
        handles.map(async (h) => {
          const { receipt, outcome, error } = await settle(h);
          if (error !== undefined) failures.set(h.operationId, error);
          return { operationId: h.operationId, callNodeId: h.callNodeId, outcome, receiptId: receipt?.id ?? null };
        }),
      );
      await watching;
      // An operation left UNKNOWN gets, below the table, what `ops resume ID` says of it: its
      // evidence and the commands to go on with.
      const commandFlags = flagsOf({ ledger: flags.ledger, authed: Object.keys(headersOf(flags)).length > 0 });
      for (const row of rows.filter((r) => r.outcome === 'unknown')) {
        const record = await ledger.load(row.operationId);
        if (record !== null) err(`${unknownMessage(record, commandFlags)}\n`);
      }
      const credential = credentialCheck(flags).credentialOf;
      // Reported here: this command is their downstream (C7), as `terminus call` is for its own.
      for (const row of rows) if (row.receiptId !== null) await executor.outbox.ack(row.receiptId);
      const resumed = new Set(handles.map((h) => h.operationId));
      const skipped = before
        .filter((r) => !resumed.has(r.id))
        .map((r) => ({
          operationId: r.id,
          callNodeId: r.callNodeId,
          outcome:
            r.server === undefined
              ? 'no_server'
              : credential !== undefined && !checkIdentity(r, credential(r.server)).ok
                ? 'identity_mismatch'
                : 'not_resumed',
          receiptId: null,
        }));
      const all = [...rows, ...skipped];
      // Each operation the credentials kept from: why, and what to pass (its record was not changed).
      for (const row of all.filter((r) => CREDENTIAL_OUTCOMES.includes(r.outcome))) {
        const record = await ledger.load(row.operationId);
        const error = failures.get(row.operationId) ?? new ExecutorError('identity_mismatch', row.outcome);
        err(`${credentialAdvice(error, record, flags)}\n`);
      }
      report(all, flags);
      if (all.some((r) => CREDENTIAL_OUTCOMES.includes(r.outcome))) return EXIT.unauthorized;
      return all.every((r) => r.receiptId !== null || r.outcome === 'never_created') ? EXIT.completed : EXIT.detached;
    },
    serverProgress(progress),
    undefined,
    log,
  );
}

/**
 * `ops resume ID`: follows the operation with the display of `terminus call` and ends as it does for
 * the same receipt (the result on stdout, the receipt line on stderr, its exit code, `--json` its
 * object), the code being `call-outcome.ts`'s.
 */
async function resumeOne(ledger: Ledger, record: ToolOperation, flags: DriveFlags): Promise<number> {
  const display = new ProgressDisplay(process.stderr, () => Date.now());
  return withExecutor(
    ledger,
    flags,
    'terminus ops resume',
    async (executor, follow, interrupted) => {
      let handle: OperationHandle;
      try {
        handle = await attachTo(executor, record, budgetOf(flags));
      } catch (error) {
        if (isCredentialFailure(error)) {
          const refused = noReceipt(
            'unauthorized',
            EXIT.unauthorized,
            record,
            true,
            credentialAdvice(error, record, flags),
          );
          printOutcome(refused, flags.json, 'terminus ops resume');
          return refused.exitCode;
        }
        err(`terminus ops resume: ${driveFailure(record.server, flags.ledger, error)}\n`);
        return EXIT.failed;
      }
      follow(handle);
      display.start();
      let outcome: CallOutcome;
      try {
        const watching = watchOne(handle, display);
        try {
          const receipt = await handle.result();
          if (receipt.status === 'completed') completeProgress(display);
          outcome = receiptOutcome(receipt, await ledger.load(handle.operationId), true);
        } catch (error) {
          outcome = followFailure(error, await ledger.load(handle.operationId), handle.operationId, {
            ledger: flags.ledger,
            authed: Object.keys(headersOf(flags)).length > 0,
            hasCredential: credentialOf(headersOf(flags)) !== null,
            command: 'ops',
            followLogs: false,
            attached: true,
            interrupted: interrupted(),
          });
        }
        await watching;
      } finally {
        display.stop();
      }
      // Reported here: this command is the receipt's downstream (C7), as `terminus call` is for its own.
      if (outcome.receipt !== null) await executor.outbox.ack(outcome.receipt.id);
      printOutcome(outcome, flags.json, 'terminus ops resume');
      return outcome.exitCode;
    },
    barProgress(display),
    display,
  );
}

/** What the server said in one answer is the bar's progress; an answer with neither leaves it. */
function barProgress(display: ProgressDisplay): (snapshot: TaskSnapshot) => void {
  return (s) => {
    if (s.progress !== undefined || s.statusMessage !== undefined) {
      display.update(progressView(s.progress, s.statusMessage));
    }
  };
}

/** The same, kept by task id for the log of several operations. */
function serverProgress(progress: Map<string, ProgressView>): (snapshot: TaskSnapshot) => void {
  return (s) => {
    if (s.progress !== undefined || s.statusMessage !== undefined) {
      progress.set(s.taskId, progressView(s.progress, s.statusMessage));
    }
  };
}

function budgetOf(flags: DriveFlags): number | undefined {
  return flags.budget === undefined ? undefined : flags.budget * 1000;
}

/**
 * One operation: the redrawn status line of `terminus call`. The statuses give the state; the
 * progress comes from the server's answers (`connectorOf` with the display), never the ledger's copy.
 */
async function watchOne(handle: OperationHandle, display: ProgressDisplay): Promise<void> {
  for await (const status of handle.statuses()) display.update(stateView(status));
}

/**
 * `ops cancel ID`: records the cancel (C8), sends it, and waits up to `--budget` seconds for the
 * server to confirm. Exit 0 when the operation ends cancelled; 1 when it ended otherwise first (its
 * result is kept) or cannot be cancelled; 3 when the confirmation has not come yet.
 */
export async function cancel(ledger: Ledger, id: string, flags: DriveFlags): Promise<number> {
  const command = 'terminus ops cancel';
  const record = await one(ledger, id, command);
  if (record === null) return EXIT.failed;
  if (isSettled(record.state)) {
    const already = record.state === 'CANCELLED_ACCEPTED';
    err(
      already
        ? `operation ${record.id} is already cancelled\n`
        : `${command}: operation ${record.id} has already ended (${record.state}): nothing to cancel; terminus ops result ${record.id} prints it\n`,
    );
    if (flags.json) out(`${JSON.stringify({ operationId: record.id, outcome: record.state, cancelled: already })}\n`);
    return already ? EXIT.completed : EXIT.failed;
  }
  const display = new ProgressDisplay(process.stderr, () => Date.now());
  return withExecutor(
    ledger,
    flags,
    command,
    async (executor, follow) => {
      let handle: OperationHandle;
      try {
        handle = await attachTo(executor, record, budgetOf(flags) ?? null);
      } catch (error) {
        if (isCredentialFailure(error)) {
          err(`${command}: ${credentialAdvice(error, record, flags)}\n`);
          return EXIT.unauthorized;
        }
        err(`${command}: ${driveFailure(record.server, flags.ledger, error)}\n`);
        return EXIT.failed;
      }
      follow(handle);
      const asked = await handle.cancel();
      if (asked.requested)
        err(`cancel requested for operation ${record.id} (task ${record.taskId ?? 'not yet named'})\n`);
      else err(`cancel not sent (${asked.reason ?? 'refused'}); waiting for the operation's end\n`);
      display.start();
      let settled: Awaited<ReturnType<typeof settle>>;
      try {
        const watching = watchOne(handle, display);
        settled = await settle(handle);
        await watching;
      } finally {
        display.stop();
      }
      const { receipt, outcome, error } = settled;
      if (receipt !== null) await executor.outbox.ack(receipt.id);
      if (flags.json) {
        out(
          `${JSON.stringify({ operationId: record.id, outcome, cancelled: receipt?.status === 'cancelled', receiptId: receipt?.id ?? null })}\n`,
        );
      }
      if (receipt?.status === 'cancelled') {
        err(`cancelled: receipt ${receipt.id} (operation ${record.id})\n`);
        return EXIT.completed;
      }
      if (receipt !== null) {
        err(
          `the task ended ${receipt.status} before the cancel took effect; its result is kept: terminus ops result ${record.id}\n`,
        );
        return EXIT.failed;
      }
      if (isCredentialFailure(error)) {
        const now = await ledger.load(record.id);
        const owed =
          now !== null && now.cancelGeneration > record.cancelGeneration
            ? `; the cancel is recorded (${now.state}): terminus ops resume ${record.id} with a credential it accepts sends it`
            : '';
        err(`${command}: ${credentialAdvice(error, owed === '' ? now : null, flags)}${owed}\n`);
        return EXIT.unauthorized;
      }
      err(`the cancel is recorded but not confirmed yet (${outcome}): terminus ops resume ${record.id} finishes it\n`);
      return EXIT.detached;
    },
    barProgress(display),
    display,
  );
}
