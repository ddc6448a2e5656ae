/**
 * `terminus call`: one long-running tool call through the executor, on a durable ledger.
 *
 * stdout carries the result only (or, with `--json`, exactly one JSON object); the progress display,
 * prompts and messages go to stderr. Ctrl-C once sends a cancel request and waits for the server's
 * answer; twice detaches (the operation stays in the ledger for `terminus ops resume`).
 *
 * Exit codes: 0 completed; 1 failed, tool error (`isError`), refused or unreachable; 2 usage;
 * 3 detached, budget exhausted, expired or unknown (see `terminus ops`); 130 cancelled.
 */
import { Command, InvalidArgumentError, Option } from 'commander';
import type { Logger } from '../core/ports.js';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import { WireUnavailableError, type WireChoice } from '../executor/adapters/index.js';
import { createExecutor } from '../executor/executor.js';
import { ExecutorError, type ApprovalRequest, type OperationHandle } from '../executor/executor-types.js';
import { DEFAULT_LEDGER_PATH, type Ledger, type Receipt } from '../executor/ledger-port.js';
import type { ToolOperation } from '../executor/operation.js';
import { WireFailure } from '../executor/wire-port.js';
import { cliConnector, stdioDescriptor, urlDescriptor } from './call-connect.js';
import { openLedgerOrExit } from './open-ledger.js';
import { redact } from './open-store.js';
import { describeElicitation, LineReader, promptElicitation } from './prompt.js';
import { ProgressDisplay } from './render.js';

/** Exit codes of `terminus call` (and `terminus ops resume`). */
export const EXIT = {
  completed: 0,
  failed: 1,
  usage: 2,
  detached: 3,
  cancelled: 130,
} as const;

interface CallFlags {
  readonly url?: string;
  readonly stdio?: string;
  readonly args: string;
  readonly ledger: string;
  readonly wire: WireChoice;
  readonly budget?: number;
  readonly json: boolean;
  readonly callNode?: string;
  readonly verbose: boolean;
}

export function registerCall(program: Command): void {
  program
    .command('call')
    .description('Call a long-running MCP tool: progress, input prompts, Ctrl-C cancels, a receipt at the end')
    .argument('<tool>', 'tool name')
    .option('--url <url>', 'MCP endpoint (Streamable HTTP), e.g. http://127.0.0.1:3000/mcp')
    .option('--stdio <command>', 'spawn a server and speak MCP on its stdin/stdout')
    .option('--args <json>', 'tool arguments as a JSON object', '{}')
    .option('--ledger <file|url>', 'SQLite ledger file or postgres:// URL', DEFAULT_LEDGER_PATH)
    .addOption(
      new Option('--wire <wire>', 'wire for the submission')
        .choices(['auto', 'mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'])
        .default('auto'),
    )
    .option('--budget <seconds>', 'stop waiting after this long (the task keeps running)', parseSeconds)
    .option('--call-node <id>', 'call node id; repeating a call with the same id never submits twice')
    .option('--json', 'print exactly one JSON object (receipt + result) on stdout', false)
    .option('--verbose', 'executor logs on stderr', false)
    .addHelpText(
      'after',
      '\nExit codes: 0 completed, 1 failed / tool error / refused / unreachable, 2 usage,\n' +
        '3 detached / budget exhausted / expired / unknown (see `terminus ops`), 130 cancelled.',
    )
    .exitOverride(usageExit)
    .action(async (tool: string, flags: CallFlags) => {
      process.exitCode = await runCall(tool, flags);
    });
}

/** Commander's own errors (unknown option, missing argument, bad choice) are usage errors: 2. */
export function usageExit(error: { readonly exitCode: number }): never {
  process.exit(error.exitCode === 0 ? 0 : EXIT.usage);
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('a positive number of seconds');
  return seconds;
}

class UsageError extends Error {}

function parseArgs(text: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`--args is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError('--args must be a JSON object, e.g. --args \'{"sections": 3}\'');
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

/** What `--json` prints, and what the human output is made from. */
export interface CallOutcome {
  readonly status: 'completed' | 'failed' | 'cancelled' | 'expired' | 'detached' | 'unknown' | 'refused' | 'error';
  readonly exitCode: number;
  readonly receipt: Receipt | null;
  readonly result: unknown;
  readonly operation: {
    readonly id: string;
    readonly callNodeId: string;
    readonly taskId: string | null;
    readonly state: string;
    readonly wire: string;
    readonly server: string;
  } | null;
  readonly message?: string;
}

async function runCall(tool: string, flags: CallFlags): Promise<number> {
  let args: Record<string, unknown>;
  let server: string;
  try {
    args = parseArgs(flags.args);
    server = serverOf(flags);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`terminus call: ${error.message}\n`);
    return EXIT.usage;
  }
  const ledger = await openLedgerOrExit(flags.ledger, 'terminus call');
  const session = new CallSession(ledger, server, tool, args, flags);
  try {
    const outcome = await session.run();
    session.print(outcome);
    return outcome.exitCode;
  } finally {
    await ledger.close();
  }
}

class CallSession {
  private readonly display = new ProgressDisplay(process.stderr, () => Date.now());
  private reader: LineReader | null = null;
  private prompts: Promise<unknown> = Promise.resolve();
  private handle: OperationHandle | null = null;
  private interrupts = 0;
  private readonly ledger: Ledger;
  private readonly server: string;
  private readonly tool: string;
  private readonly args: Record<string, unknown>;
  private readonly flags: CallFlags;

  constructor(ledger: Ledger, server: string, tool: string, args: Record<string, unknown>, flags: CallFlags) {
    this.ledger = ledger;
    this.server = server;
    this.tool = tool;
    this.args = args;
    this.flags = flags;
  }

  async run(): Promise<CallOutcome> {
    const executor = await createExecutor({
      ledger: this.ledger,
      connect: cliConnector({
        clock: systemClock,
        wire: this.flags.wire,
        stderr: this.flags.verbose ? 'inherit' : 'ignore',
        onSnapshot: (s) =>
          this.display.update({
            ...(s.statusMessage === undefined ? {} : { message: s.statusMessage }),
            ...(s.progress === undefined ? {} : { progress: s.progress }),
          }),
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
      const callNodeId = this.flags.callNode ?? systemIds.unique('cli');
      this.display.update({ state: `CONNECTING ${this.server}` });
      try {
        this.handle = await executor.submit({
          callNodeId,
          server: this.server,
          tool: this.tool,
          args: this.args,
          budgetMs: this.flags.budget === undefined ? null : this.flags.budget * 1000,
        });
      } catch (error) {
        return this.connectFailure(error);
      }
      if (this.interrupts > 0) this.sendCancel();
      const watching = this.watch(this.handle);
      const outcome = await this.settle(this.handle);
      await watching;
      return outcome;
    } finally {
      process.off('SIGINT', onSigint);
      this.display.stop();
      // Before closing the executor: a prompt still waiting on stdin would keep a driver task open.
      this.reader?.close();
      await executor.close();
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
      this.display.update({ state: s.state, serverStatus: s.serverStatus, taskId: s.taskId });
    }
  }

  /** Prompts run one at a time: an input round with several requests asks them in turn. */
  private approve(request: ApprovalRequest): Promise<unknown> {
    const turn = this.prompts.then(async () => {
      this.reader ??= new LineReader(process.stdin);
      this.display.pause();
      try {
        const header = `${request.tool} asks for input (task ${request.taskId ?? '?'}, round ${request.round}, ${request.key})`;
        return await promptElicitation(describeElicitation(request.request), header, {
          reader: this.reader,
          out: process.stderr,
          echo: process.stdin.isTTY !== true,
        });
      } finally {
        this.display.resume();
      }
    });
    this.prompts = turn.catch(() => undefined);
    return turn;
  }

  private interrupt(): void {
    this.interrupts += 1;
    if (this.handle === null) {
      if (this.interrupts > 1) process.exit(EXIT.cancelled);
      this.display.note('Ctrl-C: the cancel request is sent once the call is submitted (again to abort)');
      return;
    }
    if (this.interrupts === 1) this.sendCancel();
    else {
      this.display.note('Ctrl-C again: detaching; the operation stays in the ledger (terminus ops resume)');
      void this.handle.detach();
    }
  }

  private sendCancel(): void {
    const handle = this.handle!;
    this.display.note('Cancelling: cancel request sent, waiting for the server (Ctrl-C again to detach)');
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
      return this.fromReceipt(receipt, await this.ledger.load(handle.operationId));
    } catch (error) {
      const record = await this.ledger.load(handle.operationId);
      if (!(error instanceof ExecutorError)) {
        return this.outcome('error', EXIT.failed, record, null, String(error));
      }
      switch (error.code) {
        case 'waiting_stopped':
          return this.outcome(
            'detached',
            EXIT.detached,
            record,
            null,
            this.interrupts > 1
              ? 'detached; the operation stays in the ledger (terminus ops resume)'
              : 'wait budget exhausted; the task keeps running (terminus ops resume)',
          );
        case 'never_created':
          return this.outcome('refused', EXIT.failed, record, null, refusal(record));
        case 'unknown':
          return this.outcome('unknown', EXIT.detached, record, null, 'outcome unknown; see terminus ops reconcile');
        default:
          return this.outcome('error', EXIT.failed, record, null, error.message);
      }
    }
  }

  private fromReceipt(receipt: Receipt, record: ToolOperation | null): CallOutcome {
    const base = { receipt, result: receipt.payload };
    switch (receipt.status) {
      case 'completed': {
        const toolError = isToolError(receipt.payload);
        return {
          ...this.outcome(
            toolError ? 'failed' : 'completed',
            toolError ? EXIT.failed : EXIT.completed,
            record,
            receipt,
          ),
          ...base,
        };
      }
      case 'failed':
        return { ...this.outcome('failed', EXIT.failed, record, receipt), ...base };
      case 'cancelled':
        return { ...this.outcome('cancelled', EXIT.cancelled, record, receipt), ...base };
      case 'expired':
        return {
          ...this.outcome('expired', EXIT.detached, record, receipt, 'the task expired before its result was read'),
          ...base,
        };
    }
  }

  private outcome(
    status: CallOutcome['status'],
    exitCode: number,
    record: ToolOperation | null,
    receipt: Receipt | null,
    message?: string,
  ): CallOutcome {
    return {
      status,
      exitCode,
      receipt,
      result: receipt?.payload ?? null,
      operation:
        record === null
          ? null
          : {
              id: record.id,
              callNodeId: record.callNodeId,
              taskId: record.taskId,
              state: record.state,
              wire: record.wire.name,
              server: this.server,
            },
      ...(message === undefined ? {} : { message }),
    };
  }

  private connectFailure(error: unknown): CallOutcome {
    if (error instanceof WireUnavailableError) {
      return this.outcome('error', EXIT.failed, null, null, `${this.server}: ${error.message}`);
    }
    if (error instanceof WireFailure) {
      return this.outcome('error', EXIT.failed, null, null, `cannot reach ${this.server}: ${error.message}`);
    }
    if (error instanceof ExecutorError) return this.outcome('error', EXIT.failed, null, null, error.message);
    const code = (error as { code?: unknown }).code;
    const detail = typeof code === 'string' ? `${code}: ${String(error)}` : String(error);
    return this.outcome('error', EXIT.failed, null, null, `cannot reach ${this.server}: ${detail}`);
  }

  print(outcome: CallOutcome): void {
    if (this.flags.json) {
      // The payload is printed once, as `result`.
      const receipt = outcome.receipt === null ? null : { ...outcome.receipt, payload: undefined };
      process.stdout.write(`${JSON.stringify({ ...outcome, receipt })}\n`);
      return;
    }
    if (outcome.receipt !== null && outcome.status !== 'cancelled' && outcome.status !== 'expired') {
      process.stdout.write(renderResult(outcome.result));
    }
    const op = outcome.operation;
    const where = op === null ? '' : ` (operation ${op.id}, task ${op.taskId ?? 'none'}, ${op.state})`;
    if (outcome.receipt !== null) {
      process.stderr.write(`${outcome.status}: receipt ${outcome.receipt.id}${where}\n`);
    } else {
      process.stderr.write(`terminus call: ${outcome.status}${where}\n`);
    }
    if (outcome.message !== undefined) process.stderr.write(`  ${outcome.message}\n`);
    if (outcome.status === 'detached' || outcome.status === 'unknown') {
      process.stderr.write(`  ledger: ${redact(this.flags.ledger)}\n`);
    }
  }
}

function isToolError(payload: unknown): boolean {
  return typeof payload === 'object' && payload !== null && (payload as { isError?: unknown }).isError === true;
}

/** Why a submission was refused, from the evidence the machine recorded. */
function refusal(record: ToolOperation | null): string {
  const evidence = record?.evidence.findLast((e) => e.kind === 'submit_rejected');
  return evidence === undefined ? 'the server refused the call' : `the server refused the call: ${evidence.detail}`;
}

/** A `CallToolResult` as text: its text contents, then structured content; anything else as JSON. */
export function renderResult(payload: unknown): string {
  if (typeof payload !== 'object' || payload === null) return `${JSON.stringify(payload)}\n`;
  const result = payload as { content?: unknown; structuredContent?: unknown; code?: unknown; message?: unknown };
  if (Array.isArray(result.content)) {
    const parts = result.content.map((item: { type?: unknown; text?: unknown }) =>
      item.type === 'text' && typeof item.text === 'string' ? item.text : JSON.stringify(item),
    );
    const text = parts.join('\n');
    return text.endsWith('\n') || text === '' ? text : `${text}\n`;
  }
  return `${JSON.stringify(payload, null, 2)}\n`;
}
