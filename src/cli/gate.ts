import { availableParallelism } from 'node:os';
import { Command, InvalidArgumentError } from 'commander';
import {
  CheckpointError,
  codeDigest,
  DoneSeeds,
  otherRun,
  readCheckpoint,
  writeCheckpoint,
  type GateCheckpoint,
  type GateRun,
  type WireProgress,
} from '../sim/checkpoint.js';
import { ALL_FAULT_CLASSES, isFaultClass, type FaultClass } from '../sim/faults.js';
import { formatGate, formatWireTable, gateReportOf, wireRow, type GateReport } from '../sim/gate.js';
import { runPool } from '../sim/pool.js';
import { seedCount, type SeedRange } from '../sim/seeds.js';
import { runSeries } from '../sim/series.js';
import { GateTally } from '../sim/tally.js';
import { formatTrace } from '../sim/trace.js';
import { isSimWire, SIM_WIRES, simWire, type SimWireName } from '../sim/wires/index.js';
import { EXIT } from './call-outcome.js';
import { GateProgress, span } from './gate-progress.js';

interface GateFlags {
  readonly series: number;
  readonly seed: number;
  readonly faults?: FaultClass[];
  readonly workers: number;
  readonly json: boolean;
  readonly wire: SimWireName | 'all';
  readonly checkpoint?: string;
  readonly status: boolean;
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
      `comma-separated fault classes swarm series draw from (${ALL_FAULT_CLASSES.join(', ')})`,
      faultList,
    )
    .option('--workers <k>', 'worker threads, one per core unless told', positiveInt, availableParallelism())
    .option(
      '--wire <name>',
      `the wire the executor and server speak: ${SIM_WIRES.join(', ')}, or all (a table row per wire)`,
      wireChoice,
      'mcp-tasks-ext',
    )
    .option(
      '--checkpoint <file>',
      'save progress to FILE every 30 s and on Ctrl-C; the same command with the same FILE goes on from it',
    )
    .option(
      '--status',
      'with --checkpoint FILE: print the table of the series FILE holds (a run under way or cut short) and exit, running none',
      false,
    )
    .option('--json', 'print the report as JSON', false)
    .action((flags: GateFlags) => (flags.status ? status(flags) : gate(flags)));
}

/** The last seed a series can have: seeds are 32-bit. */
const LAST_SEED = 0xffff_ffff;

async function gate(flags: GateFlags): Promise<void> {
  if (flags.seed + flags.series - 1 > LAST_SEED) {
    process.stderr.write(
      `terminus gate: seeds ${flags.seed}..${flags.seed + flags.series - 1} go past the last seed ${LAST_SEED}: ` +
        `give at most --series ${LAST_SEED - flags.seed + 1} from --seed ${flags.seed}\n`,
    );
    process.exitCode = EXIT.usage;
    return;
  }
  const wires: readonly SimWireName[] = flags.wire === 'all' ? SIM_WIRES : [flags.wire];
  if (flags.faults !== undefined && !faultsApply(flags.faults, wires)) {
    process.exitCode = EXIT.usage;
    return;
  }
  const run: GateRun = {
    seed: flags.seed,
    series: flags.series,
    faults: flags.faults ?? null,
    wires,
    code: flags.checkpoint === undefined ? '' : codeDigest(),
  };
  const saver = flags.checkpoint === undefined ? undefined : await Saver.open(flags.checkpoint, run);
  if (saver === null) return;
  const reports: GateReport[] = [];
  for (const wire of wires) {
    const report = await runWire(flags, wire, wires.length > 1, saver);
    if (report === undefined) return;
    reports.push(report);
  }
  await printReports(reports, wires, flags);
  process.exitCode = reports.every((r) => r.pass) ? 0 : 1;
}

/**
 * `--status`: the table of what a checkpoint holds, as the run would print it had it ended there
 * (a wire not begun has no row). The run is the file's (its options, not this command's); the
 * header says how far it got and whether this build can go on with it. Exit 0 when what it holds
 * passes, 1 when not, 2 without a file to read.
 */
async function status(flags: GateFlags): Promise<void> {
  const path = flags.checkpoint;
  let saved: GateCheckpoint | undefined;
  try {
    if (path === undefined) throw new CheckpointError('--status reads a run from --checkpoint FILE: give the file');
    saved = await readCheckpoint(path);
    if (saved === undefined) throw new CheckpointError(`no checkpoint at ${path}`);
  } catch (error) {
    if (!(error instanceof CheckpointError)) throw error;
    process.stderr.write(`terminus gate: ${error.message}\n`);
    process.exitCode = EXIT.usage;
    return;
  }
  const { run } = saved;
  const reports = run.wires.flatMap((wire) => {
    const w = saved.wires.get(wire);
    return w === undefined ? [] : [gateReportOf(w.tally, w.elapsedMs, wire)];
  });
  const here = codeDigest();
  const code =
    here === run.code
      ? `code ${run.code}, this build's: the same command goes on from it`
      : `code ${run.code}; this build's is ${here}, so it cannot go on from it`;
  const lines = [`checkpoint ${path}: ${commandOf(run)} (${code})`];
  for (const wire of run.wires) {
    const w = saved.wires.get(wire);
    const done = w?.tally.series ?? 0;
    const seconds = (w?.elapsedMs ?? 0) / 1000;
    const failing = w === undefined ? 0 : w.tally.failing.length + w.tally.moreFailing.length;
    const rate = seconds > 0 ? `, ${Math.round(done / seconds)} series/s` : '';
    lines.push(
      `  ${wire}: ${done}/${run.series} series (${percent(done, run.series)}), ${span(seconds)} run${rate}, ${failing} failing`,
    );
  }
  process.stderr.write(`${lines.join('\n')}\n`);
  if (reports.length > 0) await printReports(reports, run.wires, flags);
  process.exitCode = reports.every((r) => r.pass) ? 0 : 1;
}

function commandOf(run: GateRun): string {
  const wire = run.wires.length > 1 ? 'all' : (run.wires[0] as SimWireName);
  const faults = run.faults === null ? '' : ` --faults ${run.faults.join(',')}`;
  const seed = run.seed === 1 ? '' : ` --seed ${run.seed}`;
  return `terminus gate --wire ${wire} --series ${run.series}${seed}${faults}`;
}

function percent(done: number, of: number): string {
  return `${of === 0 ? 100 : Math.floor((100 * done) / of)}%`;
}

/** The reports' tables (JSON with `--json`), then the failing series with their replay commands. */
async function printReports(
  reports: readonly GateReport[],
  wires: readonly SimWireName[],
  flags: GateFlags,
): Promise<void> {
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
    // A status ran no series: its RSS says nothing of the run's.
    if (!flags.status) process.stdout.write(`peak RSS ${(process.resourceUsage().maxRSS / 1024).toFixed(0)} MB\n`);
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
    if (!flags.status && flags.series === 1 && failures.length === 1) {
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
}

/**
 * The series of one wire across worker threads, folded into its report; with a checkpoint, only the
 * seeds it does not hold, and undefined when a signal stopped the run (the checkpoint is saved).
 */
async function runWire(
  flags: GateFlags,
  wire: SimWireName,
  several: boolean,
  saver: Saver | undefined,
): Promise<GateReport | undefined> {
  const state = saver?.wire(wire) ?? { done: new DoneSeeds(flags.seed), tally: new GateTally(), elapsedMs: 0 };
  const { done, tally } = state;
  const seeds: SeedRange = { first: flags.seed, count: flags.series, done: { below: done.below, above: done.above } };
  const already = flags.series - seedCount(seeds);
  const started = performance.now();
  // Folded as each series ends, never held: a million series run in flat memory.
  const prefix = several ? `${wire}: ` : '';
  const failing = tally.failing.length + tally.moreFailing.length;
  const progress = flags.json
    ? undefined
    : new GateProgress({ prefix, total: flags.series, started, already, failing });
  if (already > 0 && already < flags.series) {
    process.stderr.write(
      `${prefix}going on from ${already}/${flags.series} series, ${failing} failing (${saver?.path})\n`,
    );
  }
  const stopped = new AbortController();
  const segment = saver?.during(wire, state, started, stopped);
  await runPool({
    seeds,
    workers: flags.workers,
    wire,
    collect: false,
    signal: stopped.signal,
    ...(flags.faults === undefined ? {} : { faults: flags.faults }),
    onSummary: (summary, ran) => {
      tally.add(summary);
      done.add(summary.seed);
      if (summary.error !== undefined || summary.violations.length > 0) {
        const invariants = [...new Set(summary.violations.map((v) => v.invariant))].join(', ') || 'crashed';
        progress?.failed(`series ${summary.seed} failed (${invariants}): ${replayOf(wire, summary.seed)}`);
      }
      progress?.tick(already + ran);
    },
  });
  progress?.end();
  const elapsedMs = state.elapsedMs + performance.now() - started;
  if (segment !== undefined && !(await segment.end(elapsedMs))) return undefined;
  return gateReportOf(tally, elapsedMs, wire);
}

const CHECKPOINT_EVERY_MS = 30_000;

/**
 * The checkpoint of a run (`--checkpoint FILE`): read when the run starts, written every 30 s while a
 * wire runs, when it ends, and on SIGINT/SIGTERM, after which the process exits 130/143. A failed
 * write (a full disk) is told on stderr and the run goes on: the previous checkpoint stays.
 */
class Saver {
  readonly #wires = new Map<SimWireName, WireProgress>();

  private constructor(
    readonly path: string,
    readonly run: GateRun,
    saved: GateCheckpoint | undefined,
  ) {
    for (const [name, w] of saved?.wires ?? []) this.#wires.set(name, w);
  }

  /** The saver of `path`, or null after telling why it cannot be used (exit 2). */
  static async open(path: string, run: GateRun): Promise<Saver | null> {
    try {
      const saved = await readCheckpoint(path);
      const other = saved === undefined ? undefined : otherRun(saved.run, run);
      if (other !== undefined) {
        throw new CheckpointError(
          `checkpoint ${path} is of another run (${other}): give the options it was made with, or another --checkpoint file`,
        );
      }
      return new Saver(path, run, saved);
    } catch (error) {
      if (!(error instanceof CheckpointError)) throw error;
      process.stderr.write(`terminus gate: ${error.message}\n`);
      process.exitCode = EXIT.usage;
      return null;
    }
  }

  wire(name: SimWireName): WireProgress | undefined {
    return this.#wires.get(name);
  }

  /** Saves every 30 s and on a signal while `wire` runs; `end` saves once more and says whether to go on. */
  during(wire: SimWireName, state: WireProgress, started: number, stop: AbortController) {
    let signal: NodeJS.Signals | undefined;
    let writing = Promise.resolve(true);
    const save = (elapsedMs: number): Promise<boolean> => {
      this.#wires.set(wire, { ...state, elapsedMs });
      const checkpoint: GateCheckpoint = { run: this.run, wires: new Map(this.#wires) };
      writing = writing
        .then(() => writeCheckpoint(this.path, checkpoint))
        .then(
          () => true,
          (error: unknown) => {
            process.stderr.write(`terminus gate: checkpoint not saved to ${this.path}: ${(error as Error).message}\n`);
            return false;
          },
        );
      return writing;
    };
    const timer = setInterval(() => void save(state.elapsedMs + performance.now() - started), CHECKPOINT_EVERY_MS);
    const onSignal = (name: NodeJS.Signals): void => {
      if (signal !== undefined) process.exit(name === 'SIGINT' ? 130 : 143);
      signal = name;
      stop.abort();
    };
    process.on('SIGINT', onSignal).on('SIGTERM', onSignal);
    return {
      end: async (elapsedMs: number): Promise<boolean> => {
        clearInterval(timer);
        process.off('SIGINT', onSignal).off('SIGTERM', onSignal);
        const saved = await save(elapsedMs);
        if (signal === undefined) return true;
        const where = saved
          ? `checkpoint saved to ${this.path}: the same command goes on from it`
          : `the checkpoint was not saved: ${this.path} holds the last one that was`;
        process.stderr.write(
          `\n${signal}: stopped at ${state.tally.series}/${this.run.series} ${wire} series; ${where}\n`,
        );
        process.exitCode = signal === 'SIGINT' ? 130 : 143;
        return false;
      },
    };
  }
}

function wireChoice(value: string): SimWireName | 'all' {
  if (value === 'all' || isSimWire(value)) return value;
  throw new InvalidArgumentError(`unknown wire ${value}: use one of ${SIM_WIRES.join(', ')} or all`);
}

/**
 * Says on stderr which of `--faults` cannot apply on a wire, and why (the series there run without
 * them); false when none of them applies on one of the wires, which would run no fault at all.
 */
function faultsApply(faults: readonly FaultClass[], wires: readonly SimWireName[]): boolean {
  let some = true;
  for (const wire of wires) {
    const cannot = faults.filter((f) => simWire(wire).notApplicable[f] !== undefined);
    for (const f of cannot)
      process.stderr.write(`terminus gate: ${f} does not apply on ${wire}: ${simWire(wire).notApplicable[f]}\n`);
    if (cannot.length === faults.length) {
      process.stderr.write(`terminus gate: none of --faults applies on ${wire}: give a class that does\n`);
      some = false;
    }
  }
  return some;
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
  if (!Number.isInteger(n) || n < 0 || n > LAST_SEED) throw new InvalidArgumentError('expected an integer 0..2^32-1');
  return n;
}

function faultList(value: string): FaultClass[] {
  const names = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  const bad = names.filter((n) => !isFaultClass(n));
  if (bad.length > 0) throw new InvalidArgumentError(`unknown fault classes: ${bad.join(', ')}`);
  if (names.length === 0) throw new InvalidArgumentError(`give at least one of ${ALL_FAULT_CLASSES.join(', ')}`);
  return names as FaultClass[];
}
