import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import { FAULT_CLASSES, isFaultClass, type FaultClass } from '../sim/faults.js';
import { formatGate, gateReportOf } from '../sim/gate.js';
import { runPool } from '../sim/pool.js';
import { runSeries } from '../sim/series.js';
import { GateTally } from '../sim/tally.js';
import { formatTrace } from '../sim/trace.js';

interface GateFlags {
  readonly series: number;
  readonly seed: number;
  readonly faults?: FaultClass[];
  readonly workers: number;
  readonly json: boolean;
}

/** Failing series printed in full; the rest are counted. */
const SHOWN_FAILURES = 5;

/**
 * `terminus gate`: runs N seeded simulation series (seeds S..S+N-1) across worker threads and prints
 * the acceptance gate table. Exit status 0 only when every row passes. A failing series is printed
 * with its seed, fault timeline, violations and the command that replays it; a one-series run also
 * prints its event trace.
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
    .option('--workers <k>', 'worker threads (default: cores)', positiveInt, availableParallelism())
    .option('--json', 'print the report as JSON', false)
    .action((flags: GateFlags) => gate(flags));
}

async function gate(flags: GateFlags): Promise<void> {
  const seeds = Array.from({ length: flags.series }, (_, i) => flags.seed + i);
  const started = performance.now();
  let lastTick = started;
  // Folded as each series ends, never held: a million series run in flat memory.
  const tally = new GateTally();
  await runPool({
    seeds,
    workers: flags.workers,
    collect: false,
    ...(flags.faults === undefined ? {} : { faults: flags.faults }),
    onSummary: (summary, done) => {
      tally.add(summary);
      const now = performance.now();
      if (!flags.json && process.stderr.isTTY && now - lastTick > 2_000) {
        lastTick = now;
        process.stderr.write(`\r${done}/${seeds.length} series, ${((now - started) / 1000).toFixed(0)} s`);
      }
    },
  });
  if (!flags.json && process.stderr.isTTY) process.stderr.write('\n');
  const report = gateReportOf(tally, performance.now() - started);
  const failures = report.failing.map((s) => ({
    seed: s.seed,
    replay: replayOf(s.seed),
    plan: s.plan,
    violations: s.violations,
    ...(s.error === undefined ? {} : { error: s.error }),
  }));
  const more = report.moreFailing.map((f) => ({ ...f, replay: replayOf(f.seed) }));
  if (flags.json) {
    process.stdout.write(`${JSON.stringify({ ...report, failing: failures, moreFailing: more }, null, 2)}\n`);
  } else {
    process.stdout.write(`${formatGate(report)}\n`);
    // maxRSS is in KiB: the whole process (main thread and worker threads), the figure item 5 gates.
    process.stdout.write(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`);
    for (const f of failures.slice(0, SHOWN_FAILURES)) {
      process.stdout.write(`\nFAILED seed ${f.seed}\n${f.plan.join('\n')}\n`);
      for (const v of f.violations.slice(0, 10)) process.stdout.write(`  ${v.invariant}: ${v.detail}\n`);
      if (f.error !== undefined) process.stdout.write(`  crashed: ${f.error}\n`);
      process.stdout.write(`  replay: ${f.replay}\n`);
    }
    if (failures.length + more.length > SHOWN_FAILURES) {
      const rest = [
        ...failures
          .slice(SHOWN_FAILURES)
          .map((f) => ({ seed: f.seed, invariants: f.violations.map((v) => v.invariant) })),
        ...more,
      ];
      const seeds = rest.map((f) => `${f.seed} (${[...new Set(f.invariants)].join(', ') || 'crashed'})`);
      process.stdout.write(`\n... and ${rest.length} more failing series: seeds ${seeds.join(', ')}\n`);
      process.stdout.write(`  replay any of them: terminus gate --seed <seed> --series 1\n`);
    }
    if (flags.series === 1 && failures.length === 1) {
      const replay = await runSeries({
        seed: flags.seed,
        keepTrace: true,
        ...(flags.faults === undefined ? {} : { faults: flags.faults }),
      });
      process.stdout.write(`\ntrace of seed ${flags.seed}:\n${formatTrace(replay.trace)}\n`);
    }
  }
  process.exitCode = report.pass ? 0 : 1;
}

function replayOf(seed: number): string {
  return `terminus gate --seed ${seed} --series 1`;
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
