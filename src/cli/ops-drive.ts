/**
 * The `terminus ops` commands that talk to servers: `resume [ID]` follows one in-flight operation
 * (or every one) to its receipt with a fresh wait budget (C11), `cancel ID` requests a cancel (C8)
 * and waits for the server to confirm it. Ctrl-C stops following (C9); a second one exits at once.
 */
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import type { WireChoice } from '../executor/adapters/index.js';
import { createExecutor } from '../executor/executor.js';
import {
  ExecutorError,
  type ApprovalRequest,
  type Connector,
  type Executor,
  type OperationHandle,
} from '../executor/executor-types.js';
import type { Ledger, Receipt } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import { IN_FLIGHT_STATES, isSettled } from '../executor/transitions.js';
import { cliConnector, driveFailure, urlDescriptor } from './call-connect.js';
import { EXIT, receiptOutcome, unknownMessage } from './call-outcome.js';
import { attachTo, statusView, StatusLog } from './follow.js';
import { redact } from './open-store.js';
import { findOperation, notFoundMessage } from './ops-find.js';
import { defaultLedgerPath } from './paths.js';
import { describeElicitation, LineReader, promptElicitation } from './prompt.js';
import { ProgressDisplay } from './render.js';
import { headersOf, type ServerFlags } from './server-flags.js';

export interface DriveFlags extends ServerFlags {
  readonly ledger: string;
  readonly json: boolean;
  readonly url?: string;
  readonly wire: WireChoice;
  readonly budget?: number;
}

const LIST_LIMIT = 10_000;
const out = (text: string): void => void process.stdout.write(text);
const err = (text: string): void => void process.stderr.write(text);

/** One row of what `resume` reports. */
interface Row {
  readonly operationId: string;
  readonly callNodeId: string;
  readonly outcome: string;
  readonly receiptId: string | null;
}

class DriveError extends Error {}

/** The connector the flags ask for: the stored server, or `--url` instead; a bad URL throws a one-line error. */
export function connectorOf(flags: DriveFlags): Connector {
  const connect = cliConnector({ clock: systemClock, wire: flags.wire, headers: headersOf(flags) });
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
  body: (executor: Executor, follow: (h: OperationHandle) => void) => Promise<number>,
): Promise<number> {
  let connect: Connector;
  try {
    connect = connectorOf(flags);
  } catch (error) {
    err(`${command}: ${(error as Error).message}\n`);
    return EXIT.usage;
  }
  let reader: LineReader | null = null;
  let prompts: Promise<unknown> = Promise.resolve();
  const approvalGate = (request: ApprovalRequest): Promise<unknown> => {
    const turn = prompts.then(() => {
      reader ??= new LineReader(process.stdin);
      const header = `${request.tool} asks for input (operation ${request.operationId}, round ${request.round})`;
      return promptElicitation(describeElicitation(request.request), header, {
        reader,
        out: process.stderr,
        echo: process.stdin.isTTY !== true,
      });
    });
    prompts = turn.catch(() => undefined);
    return turn;
  };
  const executor = await createExecutor({
    ledger,
    connect,
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
    approvalGate,
    resubmitNeverCreated: false,
    ...(flags.budget === undefined ? {} : { defaultBudgetMs: flags.budget * 1000 }),
  });
  const followed: OperationHandle[] = [];
  let interrupts = 0;
  const onSigint = (): void => {
    interrupts += 1;
    if (interrupts > 1) {
      err('Ctrl-C again: exiting now; the operations stay in the ledger\n');
      process.exit(EXIT.detached);
    }
    err('Ctrl-C: stopped following; the tasks keep running (Ctrl-C again exits now)\n');
    for (const handle of followed) void handle.detach();
  };
  process.on('SIGINT', onSigint);
  try {
    return await body(executor, (handle) => {
      followed.push(handle);
      if (interrupts > 0) void handle.detach();
    });
  } finally {
    process.off('SIGINT', onSigint);
    (reader as LineReader | null)?.close();
    await executor.close();
  }
}

async function settle(handle: OperationHandle): Promise<{ receipt: Receipt | null; outcome: string }> {
  try {
    const receipt = await handle.result();
    return { receipt, outcome: receipt.status };
  } catch (error) {
    return { receipt: null, outcome: error instanceof ExecutorError ? error.code : String(error) };
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
      const receipt = await ledger.getReceipt(target.callNodeId);
      err(`operation ${target.id} has already ended (${target.state}); terminus ops result ${target.id} prints it\n`);
      report(
        [
          {
            operationId: target.id,
            callNodeId: target.callNodeId,
            outcome: receipt?.status ?? target.state,
            receiptId: receipt?.id ?? null,
          },
        ],
        flags,
      );
      return receipt === null ? EXIT.failed : receiptOutcome(receipt, target, false).exitCode;
    }
  }
  const record = target;
  return withExecutor(ledger, flags, command, async (executor, follow) => {
    const before = record === null ? await ledger.listByState(IN_FLIGHT_STATES, LIST_LIMIT) : [record];
    let handles: OperationHandle[];
    try {
      handles = record === null ? await executor.resume() : [await attachTo(executor, record, budgetOf(flags))];
    } catch (error) {
      err(`${command}: ${driveFailure(record?.server, flags.ledger, error)}\n`);
      return EXIT.failed;
    }
    handles.forEach(follow);
    const watching =
      handles.length === 1
        ? watchOne(handles[0]!)
        : Promise.all(handles.map((h) => new StatusLog(process.stderr).follow(h, Date.now)));
    const rows: Row[] = await Promise.all(
      handles.map(async (h) => {
        const { receipt, outcome } = await settle(h);
        return { operationId: h.operationId, callNodeId: h.callNodeId, outcome, receiptId: receipt?.id ?? null };
      }),
    );
    await watching;
    // An operation left UNKNOWN ends here as in `terminus call`: its evidence and what to do next.
    const ledgerFlag = flags.ledger === defaultLedgerPath() ? '' : ` --ledger ${redact(flags.ledger)}`;
    for (const row of rows.filter((r) => r.outcome === 'unknown')) {
      const unknown = await ledger.load(row.operationId);
      if (unknown !== null) err(`${unknownMessage(unknown, ledgerFlag)}\n`);
    }
    // Reported here: this command is their downstream (C7), as `terminus call` is for its own.
    for (const row of rows) if (row.receiptId !== null) await executor.outbox.ack(row.receiptId);
    const resumed = new Set(handles.map((h) => h.operationId));
    const skipped = before
      .filter((r) => !resumed.has(r.id))
      .map((r) => ({
        operationId: r.id,
        callNodeId: r.callNodeId,
        outcome: r.server === undefined ? 'no_server' : 'not_resumed',
        receiptId: null,
      }));
    const all = [...rows, ...skipped];
    report(all, flags);
    return all.every((r) => r.receiptId !== null || r.outcome === 'never_created') ? EXIT.completed : EXIT.detached;
  });
}

function budgetOf(flags: DriveFlags): number | undefined {
  return flags.budget === undefined ? undefined : flags.budget * 1000;
}

/** One operation: the redrawn status line of `terminus call`. */
async function watchOne(handle: OperationHandle): Promise<void> {
  const display = new ProgressDisplay(process.stderr, () => Date.now());
  display.start();
  try {
    for await (const status of handle.statuses()) display.update(statusView(status));
  } finally {
    display.stop();
  }
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
  return withExecutor(ledger, flags, command, async (executor, follow) => {
    let handle: OperationHandle;
    try {
      handle = await attachTo(executor, record, budgetOf(flags) ?? null);
    } catch (error) {
      err(`${command}: ${driveFailure(record.server, flags.ledger, error)}\n`);
      return EXIT.failed;
    }
    follow(handle);
    const asked = await handle.cancel();
    if (asked.requested)
      err(`cancel requested for operation ${record.id} (task ${record.taskId ?? 'not yet named'})\n`);
    else err(`cancel not sent (${asked.reason ?? 'refused'}); waiting for the operation's end\n`);
    const watching = watchOne(handle);
    const { receipt, outcome } = await settle(handle);
    await watching;
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
    err(`the cancel is recorded but not confirmed yet (${outcome}): terminus ops resume ${record.id} finishes it\n`);
    return EXIT.detached;
  });
}
