/**
 * `terminus call`: follows one long-running tool call through the executor, on a durable ledger,
 * like a workflow CLI's `execute` (Temporal): it submits (or re-attaches), shows what the server and
 * the executor are doing, and ends with the receipt.
 *
 * - Ctrl-C stops FOLLOWING (C9): the task keeps running, and the command prints how to follow it
 *   again and how to cancel it. A second Ctrl-C exits at once. `--cancel-on-interrupt` makes the
 *   first Ctrl-C send a cancel request instead and wait for the server's answer.
 * - Re-running the same command (server, tool, canonical arguments) re-attaches to its operation
 *   while that is in flight; after a receipt it starts a new one (`call-node.ts`). `--new` forces a
 *   new one, `--call-node ID` names the call node.
 *
 * stdout carries the result only (or, with `--json`, exactly one JSON object); the progress display,
 * prompts and messages go to stderr. Exit codes: `EXIT` in `call-outcome.ts`.
 */
import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import { MAX_DIGEST_DEPTH, tooDeepForDigest } from '../core/digest.js';
import { isTerminusError } from '../core/errors.js';
import type { Logger } from '../core/ports.js';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import { WireUnavailableError, type WireChoice } from '../executor/adapters/index.js';
import { createExecutor } from '../executor/executor.js';
import {
  ExecutorError,
  type ApprovalRequest,
  type OperationHandle,
  type OperationStatus,
} from '../executor/executor-types.js';
import type { Ledger } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import { isSettled } from '../executor/transitions.js';
import { cliConnector, driveFailure, stdioDescriptor, urlDescriptor } from './call-connect.js';
import { chooseCallNode, derivedCallNode, type CallNodeChoice } from './call-node.js';
import {
  EXIT,
  noReceipt,
  outcomeJson,
  receiptLine,
  receiptOutcome,
  renderResult,
  type CallOutcome,
} from './call-outcome.js';
import { openLedgerOrExit } from './open-ledger.js';
import { redact } from './open-store.js';
import { defaultLedgerPath, diskNote } from './paths.js';
import { describeElicitation, LineReader, promptElicitation } from './prompt.js';
import { progressView, stateView } from './follow.js';
import { LogMarks } from './log-lines.js';
import { formatElapsed, ProgressDisplay } from './render.js';
import { headersOf, serverOptions, type ServerFlags } from './server-flags.js';

export { EXIT, renderResult } from './call-outcome.js';
export type { CallOutcome } from './call-outcome.js';

interface CallFlags extends ServerFlags {
  readonly url?: string;
  readonly stdio?: string;
  readonly args: string;
  readonly ledger: string;
  readonly wire: WireChoice;
  readonly budget?: number;
  readonly json: boolean;
  readonly callNode?: string;
  readonly new: boolean;
  readonly cancelOnInterrupt: boolean;
  readonly verbose: boolean;
  readonly followLogs: boolean;
}

/** After the receipt, how long the CLI waits for the rest of the task's log (the server says `done`). */
const LOG_TAIL_MS = 10_000;

/** What `--help` says after the options: the behaviours a person must know before pressing keys. */
export const CALL_HELP = `
Follow, detach, resume, cancel:
  Ctrl-C            stop following; the task keeps running. The command prints how to follow it
                    again (terminus ops resume ID, or the same command) and how to cancel it
                    (terminus ops cancel ID). A second Ctrl-C exits at once.
  --cancel-on-interrupt
                    Ctrl-C sends a cancel request instead and waits for the server's answer.
  --follow-logs     the task's own log, line by line above the status line (stderr), with
                    "-- re-run, epoch N --" and dropped-line markers; terminus ops logs ID reads it later.
  same command again
                    re-attaches to its operation while it is in flight; once it has a receipt, a
                    re-run starts a new operation. --new always starts one.

Exit codes: 0 completed; 1 failed, tool error (isError), refused or unreachable; 2 usage;
3 detached, budget used up, expired or unknown (see terminus ops); 130 cancelled;
141 stdout's reader left before the result was printed (terminus ops result ID has it).`;

export function registerCall(program: Command): void {
  const command = program
    .command('call')
    .description('Call a long-running MCP tool and follow it: progress, input prompts, a receipt at the end')
    .argument('<tool>', 'tool name')
    .option('--url <url>', 'MCP endpoint (Streamable HTTP), e.g. http://127.0.0.1:3000/mcp')
    .option('--stdio <command>', 'spawn a server and speak MCP on its stdin/stdout')
    .option('--args <json|@file>', 'tool arguments as a JSON object, or @FILE to read them from a file', '{}');
  serverOptions(command)
    .option('--ledger <file|url>', 'SQLite ledger file or postgres:// URL (env TERMINUS_LEDGER)', defaultLedgerPath())
    .addOption(
      new Option('--wire <wire>', 'wire for the submission')
        .choices(['auto', 'mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'])
        .default('auto'),
    )
    .option('--budget <seconds>', 'stop following after this long (the task keeps running)', parseSeconds)
    .option('--call-node <id>', 'call node id; the same id never submits twice (default: derived from the command)')
    .option('--new', 'start a new operation even if this command is still in flight', false)
    .option('--cancel-on-interrupt', 'Ctrl-C sends a cancel request instead of only stopping to follow', false)
    .option('--json', 'print exactly one JSON object (receipt + result) on stdout', false)
    .option('--verbose', 'executor logs on stderr', false)
    .option(
      '--follow-logs',
      "print the task's own log as it is written, above the progress line (stderr; JSON lines with --json)",
      false,
    )
    .addHelpText('after', CALL_HELP)
    .exitOverride(usageExit)
    .action(async (tool: string, flags: CallFlags) => {
      process.exitCode = await runCall(tool, flags);
    });
}

/** Commander's own errors (unknown option, missing argument, bad choice) are usage errors: 2. */
export function usageExit(error: { readonly exitCode: number }): never {
  process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
}

export function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('a positive number of seconds');
  return seconds;
}

class UsageError extends Error {}

/**
 * `--args JSON`, or `--args @FILE` for arguments past what a command line holds (Linux: 128 KiB
 * for one argument, "Argument list too long") or kept in a file. No JSON text starts with @.
 */
function parseArgs(option: string): Record<string, unknown> {
  const from = option.startsWith('@') ? option.slice(1) : undefined;
  let text = option;
  if (from !== undefined) {
    try {
      text = readFileSync(from, 'utf8');
    } catch (error) {
      throw new UsageError(`--args @${from}: cannot read it: ${(error as Error).message}`);
    }
  }
  const what = from === undefined ? '--args' : `--args @${from}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${what} must be a JSON object, e.g. --args '{"sections": 3}'`);
  }
  if (tooDeepForDigest(value)) {
    throw new UsageError(`${what} nests deeper than ${MAX_DIGEST_DEPTH} levels, more than a call can carry`);
  }
  return value as Record<string, unknown>;
}

function serverOf(flags: CallFlags): string {
  if ((flags.url === undefined) === (flags.stdio === undefined)) {
    throw new UsageError('give exactly one of --url URL or --stdio "COMMAND"');
  }
  try {
    return flags.url !== undefined ? urlDescriptor(flags.url) : stdioDescriptor(flags.stdio!);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}

async function runCall(tool: string, flags: CallFlags): Promise<number> {
  let args: Record<string, unknown>;
  let server: string;
  let headers: Record<string, string>;
  try {
    args = parseArgs(flags.args);
    server = serverOf(flags);
    headers = headersOf(flags);
    if (flags.stdio !== undefined && (flags.header.length > 0 || flags.token !== undefined)) {
      throw new UsageError('--header and --token apply to --url servers only');
    }
    if (flags.new && flags.callNode !== undefined) {
      throw new UsageError('--new and --call-node exclude each other: a named call node is always the same call');
    }
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`terminus call: ${error.message}\n`);
    return EXIT.usage;
  }
  const ledger = await openLedgerOrExit(flags.ledger, 'terminus call');
  try {
    const choice: CallNodeChoice =
      flags.callNode !== undefined
        ? { kind: 'first', callNodeId: flags.callNode }
        : await chooseCallNode(ledger, derivedCallNode(server, tool, args), flags.new);
    const session = new CallSession(ledger, { server, tool, args, headers }, flags);
    const outcome = await session.run(choice);
    session.print(outcome);
    return outcome.exitCode;
  } finally {
    await ledger.close();
  }
}

interface CallRequest {
  readonly server: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

class CallSession {
  private readonly display = new ProgressDisplay(process.stderr, () => Date.now());
  private reader: LineReader | null = null;
  private prompts: Promise<unknown> = Promise.resolve();
  private handle: OperationHandle | null = null;
  private last: OperationStatus | null = null;
  private attached = false;
  private interrupts = 0;
  /** Aborted when following stops (Ctrl-C, budget) or the log's tail was waited for long enough. */
  private readonly logStop = new AbortController();
  /** Log lines that came during a prompt, printed once it is answered (never inside it). */
  private heldLines: string[] | null = null;
  private readonly ledger: Ledger;
  private readonly request: CallRequest;
  private readonly flags: CallFlags;

  constructor(ledger: Ledger, request: CallRequest, flags: CallFlags) {
    this.ledger = ledger;
    this.request = request;
    this.flags = flags;
  }

  async run(choice: CallNodeChoice): Promise<CallOutcome> {
    const { server, tool, args } = this.request;
    const executor = await createExecutor({
      ledger: this.ledger,
      connect: cliConnector({
        clock: systemClock,
        wire: this.flags.wire,
        headers: this.request.headers,
        stderr: this.flags.verbose ? 'inherit' : 'ignore',
        // What the server said in one answer is the one source of the bar and its message; the
        // executor's statuses (`watch`) carry the state only, their progress is the record's last.
        // An answer with neither (a finished task carries no progress) is no report: the bar stays.
        onSnapshot: (s) => {
          if (s.progress !== undefined || s.statusMessage !== undefined) {
            this.display.update(progressView(s.progress, s.statusMessage));
          }
        },
      }),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      logger: this.logger(),
      approvalGate: (request) => this.approve(request),
      // The CLI decides on a refused or doubtful submission itself; it never resubmits silently.
      resubmitNeverCreated: false,
    });
    const onSigint = (): void => this.interrupt();
    process.on('SIGINT', onSigint);
    this.display.start();
    try {
      this.announce(choice);
      this.attached = choice.kind === 'attach';
      this.display.update({ state: this.attached ? `ATTACHING ${server}` : `CONNECTING ${server}` });
      try {
        this.handle = await executor.submit({
          callNodeId: choice.callNodeId,
          server,
          tool,
          args,
          budgetMs: this.flags.budget === undefined ? null : this.flags.budget * 1000,
        });
      } catch (error) {
        return await this.submitFailure(choice.callNodeId, error);
      }
      if (this.handle.attached && choice.kind === 'first') {
        this.attached = true;
        this.display.note(
          `call node ${choice.callNodeId} is already in the ledger: attached to operation ${this.handle.operationId}`,
        );
      }
      if (this.interrupts > 0) this.onFirstInterrupt(this.handle);
      const watching = this.watch(this.handle);
      const logging = this.flags.followLogs ? this.followLogs(this.handle) : null;
      const outcome = await this.settle(this.handle);
      await watching;
      if (logging !== null) {
        await this.logTail(logging, outcome);
        // After the log's last lines, so the final status line stays below them.
        if (outcome.receipt?.status === 'completed') this.completeProgress();
      }
      // The person (stdout) is this receipt's downstream (C7): acknowledged here, so `ops prune`
      // may forget it later. A crash before the print loses only the print: `ops result` has it.
      if (outcome.receipt !== null) await executor.outbox.ack(outcome.receipt.id);
      return outcome;
    } finally {
      process.off('SIGINT', onSigint);
      this.display.stop();
      // Before closing the executor: a prompt still waiting on stdin would keep a driver task open.
      this.reader?.close();
      await executor.close();
    }
  }

  /** Says what a re-run does before it does it (the issue's "prints that it did"). */
  private announce(choice: CallNodeChoice): void {
    if (choice.kind === 'first') return;
    const prev = choice.previous;
    const age = formatElapsed(Date.now() - prev.createdAt);
    if (choice.kind === 'attach') {
      this.display.note(
        `re-attaching to operation ${prev.id} (started ${age} ago, ${prev.state}): this command is still in flight; --new starts another`,
      );
    } else if (this.flags.new && !isSettled(prev.state)) {
      this.display.note(`--new: starting a new operation beside ${prev.id} (${prev.state}, still in flight)`);
    } else {
      this.display.note(
        `the last run of this command ended (operation ${prev.id}, ${prev.state}, ${age} ago): starting a new operation`,
      );
    }
  }

  private logger(): Logger {
    const write = (level: string) => (message: string, fields?: Record<string, unknown>) => {
      if (this.flags.verbose) this.display.note(`${level} ${message}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
    };
    return { debug: () => undefined, info: write('info'), warn: write('warn'), error: write('error') };
  }

  private async watch(handle: OperationHandle): Promise<void> {
    for await (const s of handle.statuses()) {
      this.last = s;
      this.display.update(stateView(s));
    }
  }

  /** Prompts run one at a time: an input round with several requests asks them in turn. */
  private approve(request: ApprovalRequest): Promise<unknown> {
    const turn = this.prompts.then(async () => {
      this.reader ??= new LineReader(process.stdin);
      this.display.pause();
      this.heldLines ??= [];
      try {
        const header = `${request.tool} asks for input (task ${request.taskId ?? '?'}, round ${request.round}, ${request.key})`;
        return await promptElicitation(describeElicitation(request.request), header, {
          reader: this.reader,
          out: process.stderr,
          echo: process.stdin.isTTY !== true,
        });
      } finally {
        this.display.resume();
        const held = this.heldLines ?? [];
        this.heldLines = null;
        for (const line of held) this.display.note(line);
      }
    });
    this.prompts = turn.catch(() => undefined);
    return turn;
  }

  /** One line of the task's log, above the status line (held while a prompt is open). */
  private logNote(text: string): void {
    if (this.heldLines !== null) this.heldLines.push(text);
    else this.display.note(text);
  }

  /**
   * `--follow-logs`: the task's own log as it is written (issue 18). With `--json` each line goes to
   * stderr as the JSON object the server sent (stdout keeps its one object); else as text, with
   * `-- re-run, epoch N --` and dropped-lines markers.
   */
  private async followLogs(handle: OperationHandle): Promise<void> {
    const marks = new LogMarks(0);
    const follower = handle.logs({
      signal: this.logStop.signal,
      onRetry: (failure, retryInMs) =>
        this.logNote(
          `-- log: ${failure.kind} (${failure.message}); reading again in ${Math.ceil(retryInMs / 1000)} s --`,
        ),
    });
    try {
      for await (const line of follower) {
        if (this.flags.json) {
          this.logNote(JSON.stringify(line));
          continue;
        }
        const { markers, text } = marks.render(line);
        for (const marker of markers) this.logNote(marker);
        this.logNote(text);
      }
    } catch (error) {
      // A call the server answered at once has no task, hence no log: nothing to say.
      const record = await this.ledger.load(handle.operationId);
      if (error instanceof ExecutorError && error.code === 'no_task' && record?.taskId === null) return;
      this.logNote(`-- log: ${error instanceof Error ? error.message : String(error)} --`);
    }
  }

  /** After the end: the rest of the log, for at most `LOG_TAIL_MS`; on detach, nothing more. */
  private async logTail(logging: Promise<void>, outcome: CallOutcome): Promise<void> {
    if (outcome.receipt === null) {
      this.logStop.abort();
      await logging;
      return;
    }
    const timer = new Promise<'late'>((resolve) => setTimeout(() => resolve('late'), LOG_TAIL_MS).unref());
    if ((await Promise.race([logging.then(() => 'done' as const), timer])) === 'late') {
      this.logStop.abort();
      await logging;
      this.display.note(
        `-- the log was not complete ${LOG_TAIL_MS / 1000} s after the result: terminus ops logs ${outcome.receipt.operationId} reads it --`,
      );
    }
  }

  private interrupt(): void {
    this.interrupts += 1;
    if (this.interrupts > 1) return this.exitNow();
    if (this.handle === null) {
      this.display.note('Ctrl-C: stopping once the call is recorded (Ctrl-C again exits now)');
      return;
    }
    this.onFirstInterrupt(this.handle);
  }

  private onFirstInterrupt(handle: OperationHandle): void {
    if (this.flags.cancelOnInterrupt) return this.sendCancel(handle);
    this.display.note('Ctrl-C: stopped following; the task keeps running (Ctrl-C again exits now)');
    void handle.detach();
  }

  /** Suggested commands, with the ledger and server flags this run used (so they find the operation). */
  private nextSteps(operationId: string): string {
    const ledger = this.flags.ledger === defaultLedgerPath() ? '' : ` --ledger ${quote(redact(this.flags.ledger))}`;
    const auth = Object.keys(this.request.headers).length > 0 ? ' (with the same --header/--token)' : '';
    return (
      `\n  follow again: terminus ops resume ${operationId}${ledger}${auth}  (or run the same command again)` +
      `\n  cancel it:    terminus ops cancel ${operationId}${ledger}${auth}` +
      (this.flags.followLogs ? `\n  its log:      terminus ops logs ${operationId} --follow${ledger}${auth}` : '')
    );
  }

  /** The second Ctrl-C: no more waiting for anything, the operation stays in the ledger. */
  private exitNow(): never {
    this.display.stop();
    const id = this.handle?.operationId ?? this.last?.operationId;
    process.stderr.write(
      `Ctrl-C again: exiting now; ${id === undefined ? 'nothing was submitted' : `operation ${id} stays in the ledger${this.nextSteps(id)}`}\n`,
    );
    if (this.flags.json) {
      const s = this.last;
      const operation =
        s === null
          ? null
          : {
              id: s.operationId,
              callNodeId: s.callNodeId,
              taskId: s.taskId,
              state: s.state,
              wire: null,
              server: this.request.server,
            };
      process.stdout.write(
        `${JSON.stringify({ status: 'detached', isError: false, exitCode: EXIT.detached, attached: this.attached, receipt: null, result: null, operation, message: 'exited on a second Ctrl-C' })}\n`,
      );
    }
    process.exit(EXIT.detached);
  }

  private sendCancel(handle: OperationHandle): void {
    this.display.note(
      `Ctrl-C: cancel requested for ${handle.operationId}; waiting for the server (Ctrl-C again exits now)`,
    );
    handle.cancel().then(
      (outcome) => {
        if (!outcome.requested) this.display.note(`cancel not sent (${outcome.reason ?? 'refused'})`);
      },
      (error: unknown) => this.display.note(`cancel failed: ${String(error)}`),
    );
  }

  private async settle(handle: OperationHandle): Promise<CallOutcome> {
    try {
      const receipt = await handle.result();
      const record = await this.ledger.load(handle.operationId);
      // With --follow-logs the bar is completed after the log's last lines (see `run`).
      if (receipt.status === 'completed' && !this.flags.followLogs) this.completeProgress();
      return receiptOutcome(receipt, record, this.attached);
    } catch (error) {
      const record = await this.ledger.load(handle.operationId);
      const fail = (status: 'detached' | 'unknown' | 'refused' | 'error', code: number, message: string) =>
        noReceipt(status, code, record, this.attached, message);
      if (!(error instanceof ExecutorError))
        return fail('error', EXIT.failed, driveFailure(undefined, this.flags.ledger, error));
      switch (error.code) {
        case 'waiting_stopped':
          return fail(
            'detached',
            EXIT.detached,
            this.interrupts > 0
              ? `stopped following; the task keeps running${this.nextSteps(handle.operationId)}`
              : `wait budget used up; the task keeps running${this.nextSteps(handle.operationId)}`,
          );
        case 'never_created':
          return fail('refused', EXIT.failed, refusal(record));
        case 'unknown':
          return fail('unknown', EXIT.detached, 'outcome unknown; see terminus ops reconcile');
        case 'ledger_error':
          return fail(
            'error',
            EXIT.failed,
            `${error.message}${diskNote(this.flags.ledger, error)}\n  the operation stays in the ledger as last written; once the ledger can be written again:${this.nextSteps(handle.operationId)}`,
          );
        default:
          return fail('error', EXIT.failed, error.message);
      }
    }
  }

  /** A completed task did all its work: the bar ends at 100 % even if the last report was earlier. */
  private completeProgress(): void {
    const total = this.display.current.progress?.total;
    if (total === undefined || !(total > 0)) return;
    // The finished task's count, with no running task's message beside it.
    this.display.update(progressView({ done: total, total }));
    this.display.keep();
  }

  private async submitFailure(callNodeId: string, error: unknown): Promise<CallOutcome> {
    const fail = (message: string): CallOutcome => noReceipt('error', EXIT.failed, null, false, message);
    if (isTerminusError(error, 'operation_conflict')) {
      const other = await this.ledger.loadByCallNode(callNodeId);
      const what =
        other === null
          ? 'another operation'
          : `operation ${other.id} (${other.tool.name}, other arguments, ${other.state})`;
      return fail(
        `call node ${callNodeId} already belongs to ${what}: a call node names one request; pass another --call-node, or drop it to derive one`,
      );
    }
    if (error instanceof WireUnavailableError) return fail(`${this.request.server}: ${error.message}`);
    if (error instanceof ExecutorError) return fail(error.message);
    return fail(driveFailure(this.request.server, this.flags.ledger, error));
  }

  print(outcome: CallOutcome): void {
    if (this.flags.json) {
      process.stdout.write(outcomeJson(outcome));
      return;
    }
    if (outcome.receipt !== null && outcome.status !== 'cancelled' && outcome.status !== 'expired') {
      process.stdout.write(renderResult(outcome.result));
    }
    process.stderr.write(receiptLine(outcome));
    if (outcome.message !== undefined) process.stderr.write(`  ${outcome.message}\n`);
  }
}

const quote = (text: string): string => (/^[\w./:@-]+$/.test(text) ? text : `'${text.replaceAll("'", "'\\''")}'`);

/** Why a submission was refused, from the evidence the machine recorded. */
function refusal(record: ToolOperation | null): string {
  const evidence = record?.evidence.findLast((e) => e.kind === 'submit_rejected');
  return evidence === undefined ? 'the server refused the call' : `the server refused the call: ${evidence.detail}`;
}
