import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { FAULT_CLASSES, isFaultClass, type FaultClass } from '../sim/faults.js';
import { formatGate, formatWireTable, gateReportOf, wireRow, type GateReport } from '../sim/gate.js';
import { runPool } from '../sim/pool.js';
import { runSeries } from '../sim/series.js';
import { GateTally } from '../sim/tally.js';
import { formatTrace } from '../sim/trace.js';
import { isSimWire, SIM_WIRES, type SimWireName } from '../sim/wires/index.js';
import { GateProgress } from './gate-progress.js';

interface GateFlags {
  readonly series: number;
  readonly seed: number;
  readonly faults?: FaultClass[];
  readonly workers: number;
  readonly json: boolean;
  readonly wire: SimWireName | 'all';
}

/** Failing series printed in full; the rest are counted. */
const SHOWN_FAILURES = 5;

/**
 * `terminus gate`: runs N seeded simulation series (seeds S..S+N-1) across worker threads and prints
 * the acceptance gate table. Exit status 0 only when every row passes. A failing series is printed
 * with its seed, fault timeline, violations and the command that replays it (naming its wire); a
 * one-series run also prints its event trace. `--wire all` runs each wire in turn and prints a row
 * per wire, then the full table of any wire that failed.
 */
export function registerGate(program: Command): void {
  program
    .command('gate')
    .description('Run the deterministic simulation and print the acceptance gate (exit 0 only if all pass)')
    .option('--series <n>', 'number of seeded series', positiveInt, 10_000)
    .option('--seed <s>', 'first seed', nonNegativeInt, 1)
    .option(
      '--faults <list>',
      `comma-separated fault classes swarm series draw from (${FAULT_CLASSES.join(', ')})`,
      faultList,
    )
    .option('--workers <k>', 'worker threads, one per core unless told', positiveInt, availableParallelism())
    .option(
      '--wire <name>',
      `the wire the executor and server speak: ${SIM_WIRES.join(', ')}, or all (a table row per wire)`,
      wireChoice,
      'mcp-tasks-ext',
    )
    .option('--json', 'print the report as JSON', false)
    .action((flags: GateFlags) => gate(flags));
}

async function gate(flags: GateFlags): Promise<void> {
  const wires: readonly SimWireName[] = flags.wire === 'all' ? SIM_WIRES : [flags.wire];
  const reports: GateReport[] = [];
  for (const wire of wires) reports.push(await runWire(flags, wire, wires.length > 1));
  const failures = reports.flatMap((report) =>
    report.failing.map((s) => ({
      wire: report.wire,
      seed: s.seed,
      replay: replayOf(report.wire, s.seed),
      plan: s.plan,
      violations: s.violations,
      ...(s.error === undefined ? {} : { error: s.error }),
    })),
  );
  const more = reports.flatMap((report) =>
    report.moreFailing.map((f) => ({ wire: report.wire, ...f, replay: replayOf(report.wire, f.seed) })),
  );
  if (flags.json) {
    const body =
      wires.length === 1
        ? { ...reports[0], failing: failures, moreFailing: more }
        : {
            wires: reports.map((r) => ({ ...r, row: wireRow(r), failing: undefined, moreFailing: undefined })),
            failing: failures,
            moreFailing: more,
          };
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
  } else {
    // One wire: its full table (today's output). All: the table of wires, then the full table of
    // each wire that failed, so a failing row is explained where it is printed.
    if (wires.length === 1) process.stdout.write(`${formatGate(reports[0] as GateReport)}\n`);
    else {
      process.stdout.write(`${formatWireTable(reports)}\n`);
      for (const r of reports.filter((x) => !x.pass)) process.stdout.write(`\n${r.wire}:\n${formatGate(r)}\n`);
    }
    // maxRSS is in KiB: the whole process (main thread and worker threads), the figure item 5 gates.
    process.stdout.write(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`);
    for (const f of failures.slice(0, SHOWN_FAILURES)) {
      process.stdout.write(`\nFAILED ${f.wire} seed ${f.seed}\n${f.plan.join('\n')}\n`);
      for (const v of f.violations.slice(0, 10)) process.stdout.write(`  ${v.invariant}: ${v.detail}\n`);
      if (f.error !== undefined) process.stdout.write(`  crashed: ${f.error}\n`);
      process.stdout.write(`  replay: ${f.replay}\n`);
    }
    if (failures.length + more.length > SHOWN_FAILURES) {
      const rest = [
        ...failures
          .slice(SHOWN_FAILURES)
          .map((f) => ({ wire: f.wire, seed: f.seed, invariants: f.violations.map((v) => v.invariant) })),
        ...more,
      ];
      const seeds = rest.map((f) => `${f.wire} ${f.seed} (${[...new Set(f.invariants)].join(', ') || 'crashed'})`);
      process.stdout.write(`\n... and ${rest.length} more failing series: ${seeds.join(', ')}\n`);
      process.stdout.write(`  replay any of them: terminus gate --wire <wire> --seed <seed> --series 1\n`);
    }
    if (flags.series === 1 && failures.length === 1) {
      const f = failures[0] as (typeof failures)[number];
      const replay = await runSeries({
        seed: flags.seed,
        wire: f.wire,
        keepTrace: true,
        ...(flags.faults === undefined ? {} : { faults: flags.faults }),
      });
      process.stdout.write(`\ntrace of ${f.wire} seed ${flags.seed}:\n${formatTrace(replay.trace)}\n`);
    }
  }
  process.exitCode = reports.every((r) => r.pass) ? 0 : 1;
}

/** The series of one wire across worker threads, folded into its report. */
async function runWire(flags: GateFlags, wire: SimWireName, several: boolean): Promise<GateReport> {
  const seeds = Array.from({ length: flags.series }, (_, i) => flags.seed + i);
  const started = performance.now();
  // Folded as each series ends, never held: a million series run in flat memory.
  const tally = new GateTally();
  const progress = flags.json ? undefined : new GateProgress(several ? `${wire}: ` : '', seeds.length, started);
  await runPool({
    seeds,
    workers: flags.workers,
    wire,
    collect: false,
    ...(flags.faults === undefined ? {} : { faults: flags.faults }),
    onSummary: (summary, done) => {
      tally.add(summary);
      if (summary.error !== undefined || summary.violations.length > 0) {
        const invariants = [...new Set(summary.violations.map((v) => v.invariant))].join(', ') || 'crashed';
        progress?.failed(`series ${summary.seed} failed (${invariants}): ${replayOf(wire, summary.seed)}`);
      }
      progress?.tick(done);
    },
  });
  progress?.end();
  return gateReportOf(tally, performance.now() - started, wire);
}

function wireChoice(value: string): SimWireName | 'all' {
  if (value === 'all' || isSimWire(value)) return value;
  throw new InvalidArgumentError(`unknown wire ${value}: use one of ${SIM_WIRES.join(', ')} or all`);
}

function replayOf(wire: SimWireName, seed: number): string {
  return `terminus gate --wire ${wire} --seed ${seed} --series 1`;
}

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a positive integer');
  return n;
}

function nonNegativeInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 0xffff_ffff) throw new InvalidArgumentError('expected an integer 0..2^32-1');
  return n;
}

function faultList(value: string): FaultClass[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = names.filter((n) => !isFaultClass(n));
  if (bad.length > 0) throw new InvalidArgumentError(`unknown fault classes: ${bad.join(', ')}`);
  return names as FaultClass[];
}
