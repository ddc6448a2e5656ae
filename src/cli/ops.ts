/**
 * `terminus ops`: what an operator needs on a ledger. `list` (in flight), `show ID` (one operation,
 * its result and history), `result ID` (the accepted payload), `resume [ID]` and `cancel ID`
 * (`ops-drive.ts`), `logs ID` (the task's own log, `ops-logs.ts`), `reconcile` (the operations in doubt, with their evidence, C4), `prune` (forget
 * settled operations older than a bound) and `rollback` (bump the executor epoch). `ID` is an
 * operation id, call node, task id or submission key, or an unambiguous prefix of one.
 */
import { access } from 'node:fs/promises';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { PRUNABLE_STATES, type Ledger, type Receipt } from '../executor/ledger-port.js';
import { LOCAL_STATES, redactOperation, type LocalState, type ToolOperation } from '../executor/operation.js';
import { IN_FLIGHT_STATES } from '../executor/transitions.js';
import { parseSeconds, usageExit } from './call.js';
import { urlDescriptor } from './call-connect.js';
import { EXIT, isToolError, receiptOutcome, renderResult } from './call-outcome.js';
import { openLedgerOrExit } from './open-ledger.js';
import { cancel, resume, type DriveFlags } from './ops-drive.js';
import { logs, parseCursor, type LogsFlags } from './ops-logs.js';
import { findOperation, notFoundMessage } from './ops-find.js';
import { isPostgresUrl, redact } from './open-store.js';
import { defaultLedgerPath } from './paths.js';
import { formatElapsed } from './render.js';
import { serverOptions } from './server-flags.js';

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
    .description(
      'Inspect and drive the operations of a client ledger (ID: operation id, call node, task id, key, or a prefix)',
    )
    .exitOverride(usageExit);
  const common = (cmd: Command): Command =>
    cmd
      .option('--ledger <file|url>', 'SQLite ledger file or postgres:// URL (env TERMINUS_LEDGER)', defaultLedgerPath())
      .option('--json', 'print JSON on stdout', false)
      .exitOverride(usageExit);
  const driving = (cmd: Command): Command =>
    serverOptions(common(cmd))
      .option('--url <url>', 'reach the server at this URL instead of the one stored with the operation', checkUrl)
      .option(
        '--credential-changed',
        'the credential is not the one the operation was submitted under, but the same principal holds it (a rotated token): drive it anyway',
        false,
      )
      .addOption(
        new Option('--wire <wire>', 'wire when reconnecting')
          .choices(['auto', 'mcp-tasks-ext', 'mcp-2025-11-25', 'sep-1391', 'aip-151'])
          .default('auto'),
      );

  common(ops.command('list').description('operations in flight (all of them with --all)'))
    .option('--all', 'every operation, settled ones included', false)
    .action((flags: CommonFlags & { all: boolean }) => run(flags, (ledger) => list(ledger, flags)));

  withId(
    common(ops.command('show').description('one operation: record, result, evidence and history of transitions')),
  ).action((id: string, flags: CommonFlags) => run(flags, (ledger) => show(ledger, id, flags)));

  withId(common(ops.command('result').description('the accepted result of an operation (its receipt payload)'))).action(
    (id: string, flags: CommonFlags) => run(flags, (ledger) => result(ledger, id, flags)),
  );

  withId(
    driving(
      ops
        .command('resume')
        .description('follow one in-flight operation (or all of them) to its receipt, with a fresh wait budget'),
    ),
    'optional',
  )
    .option('--budget <seconds>', 'stop following after this long (the tasks keep running)', parseSeconds)
    .action((id: string | undefined, flags: DriveFlags) => run(flags, (ledger) => resume(ledger, id, flags)));

  withId(
    driving(ops.command('cancel').description('request the cancel of an operation and wait for the server to confirm')),
  )
    .option('--budget <seconds>', 'stop waiting for the confirmation after this long', parseSeconds, 60)
    .action((id: string, flags: DriveFlags) => run(flags, (ledger) => cancel(ledger, id, flags)));

  withId(
    driving(ops.command('logs').description("the task's own log, read from its server (no effect on the operation)")),
  )
    .option('--follow', 'keep reading until the task ends and its log is complete', false)
    .option('--after <seq>', 'only lines after this one (the `next` an earlier read printed)', parseCursor, 0)
    .action((id: string, flags: LogsFlags) => run(flags, (ledger) => logs(ledger, id, flags)));

  common(ops.command('reconcile').description('operations in doubt (UNKNOWN) with their evidence')).action(
    (flags: CommonFlags) => run(flags, (ledger) => reconcile(ledger, flags)),
  );

  common(
    ops
      .command('prune')
      .description(
        'forget settled and never-created operations older than a bound (receipts not yet acknowledged stay)',
      ),
  )
    .option('--older-than <age>', 'age of the last update: 30d, 12h, 90m or seconds', parseAge, parseAge('30d'))
    .option('--dry-run', 'list what would be pruned and delete nothing', false)
    .action((flags: PruneFlags) => run(flags, (ledger) => prune(ledger, flags)));

  common(
    ops.command('rollback').description('bump the executor epoch: older executors stop, the next resume takes over'),
  ).action((flags: CommonFlags) => run(flags, (ledger) => rollback(ledger, flags)));
}

const ID_HELP =
  'operation id, call node id, task id or submission key (or a prefix); one that begins with - goes after --';

/**
 * The `ID` argument of a command. A peer's task id may begin with `-`, which commander reads as an
 * option: the usage error then says how to pass it (`terminus ops show -- -abc`).
 */
function withId(cmd: Command, presence: 'required' | 'optional' = 'required'): Command {
  return cmd
    .argument(presence === 'required' ? '<id>' : '[id]', presence === 'required' ? ID_HELP : `${ID_HELP}; default: all`)
    .exitOverride((error: CommanderError) => {
      const option = /unknown option '(-[^'=\s]+)'/.exec(error.message)?.[1];
      if (error.code === 'commander.unknownOption' && option !== undefined) {
        process.stderr.write(`if ${option} is an ID, put it after --: terminus ops ${cmd.name()} -- ${option}\n`);
      }
      return usageExit(error);
    });
}

/** `--url` is checked before the ledger is read: a URL without its scheme is a usage error at once. */
function checkUrl(value: string): string {
  try {
    urlDescriptor(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return value;
}

/** `30d`, `12h`, `90m`, `45s` or a number of seconds, as milliseconds. */
export function parseAge(value: string): number {
  const match = /^(\d+(?:\.\d+)?)([dhms]?)$/.exec(value.trim());
  if (match === null) throw new InvalidArgumentError('an age such as 30d, 12h, 90m or 3600 (seconds)');
  const unit = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000, '': 1000 }[match[2] as 'd' | 'h' | 'm' | 's' | ''];
  return Number(match[1]) * unit;
}

async function run(flags: CommonFlags, body: (ledger: Ledger) => Promise<number>): Promise<void> {
  try {
    if (!isPostgresUrl(flags.ledger)) await access(flags.ledger);
  } catch {
    process.stderr.write(
      `terminus ops: no ledger at ${flags.ledger} (nothing was called with it yet): pass --ledger FILE or set TERMINUS_LEDGER\n`,
    );
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

async function show(ledger: Ledger, id: string, flags: CommonFlags): Promise<number> {
  const found = await findOperation(ledger, id);
  if (found.kind === 'none' || (found.kind === 'many' && !found.exact)) {
    process.stderr.write(`${notFoundMessage('terminus ops show', id, found)}\n`);
    return EXIT.failed;
  }
  const records = found.kind === 'one' ? [found.operation] : found.operations;
  const shown = await Promise.all(
    // The session id is a secret: shown as `<redacted>`, in the JSON too.
    records.map(async (r) => ({ operation: redactOperation(r), receipt: await ledger.getReceipt(r.callNodeId) })),
  );
  if (flags.json) {
    out(`${JSON.stringify(shown.length === 1 ? shown[0] : { operations: shown })}\n`);
    return EXIT.completed;
  }
  out(shown.map(({ operation, receipt }) => describe(operation, receipt)).join('\n'));
  return EXIT.completed;
}

/**
 * The accepted payload on stdout (the `CallToolResult` as text, or with `--json` exactly as
 * received); the exit code is the one `terminus call` would have ended with.
 */
async function result(ledger: Ledger, id: string, flags: CommonFlags): Promise<number> {
  const found = await findOperation(ledger, id);
  if (found.kind !== 'one') {
    process.stderr.write(`${notFoundMessage('terminus ops result', id, found)}\n`);
    return EXIT.failed;
  }
  const record = found.operation;
  const receipt = await ledger.getReceipt(record.callNodeId);
  if (receipt === null) {
    const next =
      record.state === 'NEVER_CREATED'
        ? 'the server never created it'
        : `terminus ops resume ${record.id} follows it to its result`;
    process.stderr.write(`terminus ops result: operation ${record.id} has no result (${record.state}): ${next}\n`);
    return record.state === 'NEVER_CREATED' ? EXIT.failed : EXIT.detached;
  }
  const outcome = receiptOutcome(receipt, record, false);
  if (flags.json) out(`${JSON.stringify(receipt.payload)}\n`);
  else if (receipt.status === 'completed' || receipt.status === 'failed') out(renderResult(receipt.payload));
  const note = outcome.isError ? 'completed with a tool error (isError)' : receipt.status;
  process.stderr.write(`${note}: receipt ${receipt.id} (operation ${record.id}, task ${receipt.taskId})\n`);
  return outcome.exitCode;
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
    ...(r.session === undefined || r.session === null
      ? []
      : [`session     an HTTP session (${r.session.protocolVersion}, id not shown), reused on resume`]),
    `state       ${r.state}`,
    `server says ${r.lastServerStatus ?? '-'}`,
    `task id     ${r.taskId ?? '-'}`,
    `key         ${r.submissionKey}${r.priorSubmissionKeys.length > 0 ? ` (before: ${r.priorSubmissionKeys.join(', ')})` : ''}`,
    `credential  ${(r.identity ?? null) === null ? 'none' : `submitted with one (fingerprint ${r.identity!.slice(0, 12)}…; never the credential)`}`,
    `epoch       ${r.executionEpoch}, cancel generation ${r.cancelGeneration}, input round ${r.input.round}`,
    `created     ${iso(r.createdAt)}, updated ${iso(r.updatedAt)}, expires ${iso(r.expiresAt)}`,
    `receipt     ${receipt === null ? '-' : `${receipt.id} (${receipt.status}, digest ${receipt.resultDigest ?? '-'})`}`,
  ];
  if (receipt !== null && receipt.payload !== null && receipt.status !== 'cancelled') {
    const label =
      receipt.status === 'completed'
        ? isToolError(receipt.payload)
          ? 'result (tool error)'
          : 'result'
        : receipt.status;
    lines.push(label);
    const text =
      receipt.status === 'completed' ? renderResult(receipt.payload) : `${JSON.stringify(receipt.payload)}\n`;
    for (const line of text.replace(/\n$/, '').split('\n')) lines.push(`  ${line}`);
  }
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

type PruneFlags = CommonFlags & { olderThan: number; dryRun: boolean };

/** A dry run reads every candidate at once (nothing is deleted, so batches would repeat themselves). */
const DRY_RUN_LIMIT = 1_000_000_000;

/** Deletes in batches of 1,000 so one transaction never holds the ledger's write lock for long. */
async function prune(ledger: Ledger, flags: PruneFlags): Promise<number> {
  const before = Date.now() - flags.olderThan;
  if (flags.dryRun) {
    const wouldPrune = await ledger.prune({ updatedBefore: before, limit: DRY_RUN_LIMIT, dryRun: true });
    if (flags.json) out(`${JSON.stringify({ dryRun: true, wouldPrune, updatedBefore: before })}\n`);
    else {
      out(
        `would prune ${wouldPrune.length} operation(s) settled before ${new Date(before).toISOString()} ` +
          `from ${redact(flags.ledger)} (dry run: nothing deleted)\n`,
      );
      for (const id of wouldPrune) out(`  ${id}\n`);
    }
    return EXIT.completed;
  }
  const pruned: string[] = [];
  for (;;) {
    const batch = await ledger.prune({ updatedBefore: before, limit: 1_000 });
    pruned.push(...batch);
    if (batch.length < 1_000) break;
  }
  if (flags.json) out(`${JSON.stringify({ pruned, updatedBefore: before })}\n`);
  else {
    out(
      `pruned ${pruned.length} operation(s) settled before ${new Date(before).toISOString()} ` +
        `(${PRUNABLE_STATES.join(', ')}; receipts not yet acknowledged were kept) from ${redact(flags.ledger)}\n`,
    );
  }
  return EXIT.completed;
}
