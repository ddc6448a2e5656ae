/**
 * `terminus ops`: what an operator needs on a ledger. `list` (in flight), `show ID` (one operation
 * and its history), `resume` (drive every in-flight operation to its receipt), `reconcile` (the
 * operations in doubt, with their evidence, C4) and `rollback` (bump the executor epoch).
 */
import { access } from 'node:fs/promises';
import { Command, InvalidArgumentError, Option } from 'commander';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import type { WireChoice } from '../executor/adapters/index.js';
import { createExecutor } from '../executor/executor.js';
import { ExecutorError, type ApprovalRequest, type Connector } from '../executor/executor-types.js';
import { DEFAULT_LEDGER_PATH, type Ledger, type Receipt } from '../executor/ledger-port.js';
import { LOCAL_STATES, type LocalState, type ToolOperation } from '../executor/operation.js';
import { IN_FLIGHT_STATES } from '../executor/transitions.js';
import { EXIT, usageExit } from './call.js';
import { cliConnector, urlDescriptor } from './call-connect.js';
import { openLedgerOrExit } from './open-ledger.js';
import { isPostgresUrl } from './open-store.js';
import { describeElicitation, LineReader, promptElicitation } from './prompt.js';
import { formatElapsed } from './render.js';

interface CommonFlags {
  readonly ledger: string;
  readonly json: boolean;
}

/** States an operator must look at: the doubtful ones, and late effects after a won cancel. */
export const RECONCILE_STATES: readonly LocalState[] = [
  'UNKNOWN',
  'SUBMISSION_UNKNOWN',
  'EFFECT_RECONCILIATION_REQUIRED',
];
const LIST_LIMIT = 10_000;

export function registerOps(program: Command): void {
  const ops = program
    .command('ops')
    .description('Inspect and drive the operations of a client ledger')
    .exitOverride(usageExit);
  const common = (cmd: Command): Command =>
    cmd
      .option('--ledger <file|url>', 'SQLite ledger file or postgres:// URL', DEFAULT_LEDGER_PATH)
      .option('--json', 'print JSON on stdout', false)
      .exitOverride(usageExit);

  common(ops.command('list').description('operations in flight (all of them with --all)'))
    .option('--all', 'every operation, settled ones included', false)
    .action((flags: CommonFlags & { all: boolean }) => run(flags, (ledger) => list(ledger, flags)));

  common(ops.command('show').description('one operation: record, evidence and history of transitions'))
    .argument('<id>', 'operation id, call node id, task id or submission key')
    .action((id: string, flags: CommonFlags) => run(flags, (ledger) => show(ledger, id, flags)));

  common(ops.command('resume').description('drive every in-flight operation to its terminal receipt'))
    .option('--url <url>', 'reach every operation at this URL instead of the server stored with it')
    .option('--budget <seconds>', 'stop waiting after this long', parseSeconds)
    .addOption(
      new Option('--wire <wire>', 'wire when reconnecting')
        .choices(['auto', 'mcp-tasks-ext', 'mcp-2025-11-25'])
        .default('auto'),
    )
    .action((flags: ResumeFlags) => run(flags, (ledger) => resume(ledger, flags)));

  common(ops.command('reconcile').description('operations in doubt (UNKNOWN) with their evidence')).action(
    (flags: CommonFlags) => run(flags, (ledger) => reconcile(ledger, flags)),
  );

  common(
    ops.command('rollback').description('bump the executor epoch: older executors stop, the next resume takes over'),
  ).action((flags: CommonFlags) => run(flags, (ledger) => rollback(ledger, flags)));
}

function parseSeconds(value: string): number {
  const seconds = Number(value);
  if (!Number.isFinite(seconds) || seconds <= 0) throw new InvalidArgumentError('a positive number of seconds');
  return seconds;
}

async function run(flags: CommonFlags, body: (ledger: Ledger) => Promise<number>): Promise<void> {
  try {
    if (!isPostgresUrl(flags.ledger)) await access(flags.ledger);
  } catch {
    process.stderr.write(`terminus ops: no ledger at ${flags.ledger}\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  const ledger = await openLedgerOrExit(flags.ledger, 'terminus ops');
  try {
    process.exitCode = await body(ledger);
  } finally {
    await ledger.close();
  }
}

const out = (text: string): void => void process.stdout.write(text);

/** One row of `ops list`. */
export function summary(r: ToolOperation, now: number) {
  return {
    id: r.id,
    callNodeId: r.callNodeId,
    tool: r.tool.name,
    state: r.state,
    serverStatus: r.lastServerStatus,
    taskId: r.taskId,
    wire: r.wire.name,
    server: r.server ?? null,
    ageMs: now - r.createdAt,
    waitingStopped: r.waitingStoppedAt !== null,
  };
}

function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[line(header), ...rows.map(line)].join('\n')}\n`;
}

async function list(ledger: Ledger, flags: CommonFlags & { all: boolean }): Promise<number> {
  const states = flags.all ? LOCAL_STATES : IN_FLIGHT_STATES;
  const records = await ledger.listByState(states, LIST_LIMIT);
  const now = Date.now();
  if (flags.json) {
    out(`${JSON.stringify({ operations: records.map((r) => summary(r, now)) })}\n`);
    return EXIT.completed;
  }
  if (records.length === 0) {
    out(flags.all ? 'no operations\n' : 'nothing in flight\n');
    return EXIT.completed;
  }
  const rows = records.map((r) => [
    r.id,
    r.callNodeId,
    r.tool.name,
    r.state,
    r.lastServerStatus ?? '-',
    formatElapsed(now - r.createdAt),
  ]);
  out(table(['ID', 'CALL NODE', 'TOOL', 'STATE', 'SERVER', 'AGE'], rows));
  return EXIT.completed;
}

/** By operation id, call node, task id or submission key (C4: every doubt is findable by both). */
async function find(ledger: Ledger, id: string): Promise<ToolOperation[]> {
  const direct = (await ledger.load(id)) ?? (await ledger.loadByCallNode(id)) ?? (await ledger.findBySubmissionKey(id));
  if (direct !== null) return [direct];
  return ledger.findByTaskId(id);
}

async function show(ledger: Ledger, id: string, flags: CommonFlags): Promise<number> {
  const found = await find(ledger, id);
  if (found.length === 0) {
    process.stderr.write(`terminus ops show: no operation, call node, task or submission key ${id}\n`);
    return EXIT.failed;
  }
  const shown = await Promise.all(
    found.map(async (r) => ({ operation: r, receipt: await ledger.getReceipt(r.callNodeId) })),
  );
  if (flags.json) {
    out(`${JSON.stringify(shown.length === 1 ? shown[0] : { operations: shown })}\n`);
    return EXIT.completed;
  }
  out(shown.map(({ operation, receipt }) => describe(operation, receipt)).join('\n'));
  return EXIT.completed;
}

function iso(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

export function describe(r: ToolOperation, receipt: Receipt | null): string {
  const lines = [
    `operation   ${r.id}`,
    `call node   ${r.callNodeId}`,
    `tool        ${r.tool.name} (${r.tool.descriptorVersion})`,
    `server      ${r.server ?? '-'}`,
    `wire        ${r.wire.name} (${r.wire.adapterVersion})`,
    `state       ${r.state}`,
    `server says ${r.lastServerStatus ?? '-'}`,
    `task id     ${r.taskId ?? '-'}`,
    `key         ${r.submissionKey}${r.priorSubmissionKeys.length > 0 ? ` (before: ${r.priorSubmissionKeys.join(', ')})` : ''}`,
    `epoch       ${r.executionEpoch}, cancel generation ${r.cancelGeneration}, input round ${r.input.round}`,
    `created     ${iso(r.createdAt)}, updated ${iso(r.updatedAt)}, expires ${iso(r.expiresAt)}`,
    `receipt     ${receipt === null ? '-' : `${receipt.id} (${receipt.status}, digest ${receipt.resultDigest ?? '-'})`}`,
  ];
  if (r.evidence.length > 0) {
    lines.push('evidence');
    for (const e of r.evidence) lines.push(`  ${iso(e.at)}  ${e.kind}: ${e.detail}`);
  }
  lines.push('history');
  if (r.history.length === 0) lines.push(`  ${iso(r.createdAt)}  (created) -> SUBMITTING`);
  for (const h of r.history) lines.push(`  ${iso(h.at)}  ${h.from} -> ${h.to}  (${h.event})`);
  return `${lines.join('\n')}\n`;
}

/** One row of `ops reconcile`: everything an operator needs to settle the doubt by hand. */
export function evidenceOf(r: ToolOperation) {
  const last = r.evidence.at(-1);
  return {
    id: r.id,
    callNodeId: r.callNodeId,
    tool: r.tool.name,
    state: r.state,
    server: r.server ?? null,
    taskId: r.taskId,
    submissionKey: r.submissionKey,
    priorSubmissionKeys: r.priorSubmissionKeys,
    lastServerStatus: r.lastServerStatus,
    lastError: last === undefined ? null : `${last.kind}: ${last.detail}`,
    evidence: r.evidence,
    updatedAt: r.updatedAt,
  };
}

async function reconcile(ledger: Ledger, flags: CommonFlags): Promise<number> {
  const records = await ledger.listByState(RECONCILE_STATES, LIST_LIMIT);
  const items = records.map(evidenceOf);
  if (flags.json) {
    out(`${JSON.stringify({ items })}\n`);
    return EXIT.completed;
  }
  if (items.length === 0) {
    out('nothing to reconcile\n');
    return EXIT.completed;
  }
  for (const item of items) {
    out(
      [
        `${item.id}  ${item.state}  ${item.tool}  call node ${item.callNodeId}`,
        `  server          ${item.server ?? '-'}`,
        `  task id         ${item.taskId ?? '- (never acknowledged)'}`,
        `  submission key  ${item.submissionKey}`,
        `  server status   ${item.lastServerStatus ?? '-'}`,
        `  last error      ${item.lastError ?? '-'}`,
        '',
      ].join('\n'),
    );
  }
  return EXIT.completed;
}

async function rollback(ledger: Ledger, flags: CommonFlags): Promise<number> {
  const inFlight = await ledger.listByState(IN_FLIGHT_STATES, LIST_LIMIT);
  const epoch = await ledger.bumpEpoch();
  if (flags.json) out(`${JSON.stringify({ epoch, inFlight: inFlight.length })}\n`);
  else {
    out(`executor epoch is now ${epoch}: executors of older epochs stop (their writes are refused).\n`);
    out(`${inFlight.length} in-flight operation(s) are taken over by the next \`terminus ops resume\`.\n`);
  }
  return EXIT.completed;
}

interface ResumeFlags extends CommonFlags {
  readonly url?: string;
  readonly budget?: number;
  readonly wire: WireChoice;
}

async function resume(ledger: Ledger, flags: ResumeFlags): Promise<number> {
  let connect: Connector = cliConnector({ clock: systemClock, wire: flags.wire });
  if (flags.url !== undefined) {
    let url: string;
    try {
      url = urlDescriptor(flags.url);
    } catch (error) {
      process.stderr.write(`terminus ops resume: ${(error as Error).message}\n`);
      return EXIT.usage;
    }
    const inner = connect;
    connect = (_server, wire) => inner(url, wire);
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
  const stops: (() => Promise<void>)[] = [];
  const onSigint = (): void => {
    process.stderr.write('Ctrl-C: detaching; the operations stay in the ledger\n');
    for (const stop of stops) void stop();
  };
  process.on('SIGINT', onSigint);
  try {
    const before = await ledger.listByState(IN_FLIGHT_STATES, LIST_LIMIT);
    const handles = await executor.resume();
    for (const h of handles) stops.push(() => h.detach());
    const results = await Promise.all(
      handles.map(async (h) => {
        try {
          const receipt = await h.result();
          return {
            operationId: h.operationId,
            callNodeId: h.callNodeId,
            outcome: receipt.status,
            receiptId: receipt.id,
          };
        } catch (error) {
          const code = error instanceof ExecutorError ? error.code : 'error';
          return { operationId: h.operationId, callNodeId: h.callNodeId, outcome: code, receiptId: null };
        }
      }),
    );
    const resumed = new Set(handles.map((h) => h.operationId));
    const skipped = before
      .filter((r) => !resumed.has(r.id))
      .map((r) => ({
        operationId: r.id,
        callNodeId: r.callNodeId,
        outcome: r.server === undefined ? 'no_server' : 'not_resumed',
        receiptId: null,
      }));
    const all = [...results, ...skipped];
    if (flags.json) out(`${JSON.stringify({ operations: all })}\n`);
    else if (all.length === 0) out('nothing in flight\n');
    else
      out(
        table(
          ['OPERATION', 'CALL NODE', 'OUTCOME', 'RECEIPT'],
          all.map((r) => [r.operationId, r.callNodeId, r.outcome, r.receiptId ?? '-']),
        ),
      );
    return all.every((r) => r.receiptId !== null || r.outcome === 'never_created') ? EXIT.completed : EXIT.detached;
  } finally {
    process.off('SIGINT', onSigint);
    (reader as LineReader | null)?.close();
    await executor.close();
  }
}
