/**
 * A gate run's checkpoint: which run it is (first seed, series, faults, wires) and, per wire, the
 * seeds done, the tally folded from them and the time spent. It is written whole to a temporary file,
 * fsynced and renamed over the last one, so a run cut short (Ctrl-C, a kill, the end of a session)
 * goes on from its last checkpoint instead of from its first seed, and a crash mid-write leaves the
 * previous checkpoint. The simulation is deterministic: a series run again after a checkpoint gives
 * the summary it gave before, so a continued run reports what an uninterrupted one would (its wall
 * time aside).
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { open, rename, rm } from 'node:fs/promises';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { isFaultClass, type FaultClass } from './faults.js';
import { COUNTS, GateTally, HISTOGRAMS, type TallySnapshot } from './tally.js';
import { isSimWire, type SimWireName } from './wires/index.js';

/** What a checkpoint is of: a run continues from one only with the same seeds, faults and wires. */
export interface GateRun {
  readonly seed: number;
  readonly series: number;
  /** The `--faults` list, or null for every class. */
  readonly faults: readonly FaultClass[] | null;
  readonly wires: readonly SimWireName[];
  /** `codeDigest()` of the code that began the run: it goes on only on the same code. */
  readonly code: string;
}

/**
 * A digest of the code a series runs: every module below the package's code folder (`dist/` built,
 * `src/` from sources) but the command line's. A continued run on changed code would fold summaries
 * of two programs into one verdict, so any change, even one that keeps behaviour, starts a new run.
 */
export function codeDigest(): string {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const hash = createHash('sha256');
  const walk = (folder: string): void => {
    for (const entry of readdirSync(folder, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const path = join(folder, entry.name);
      if (entry.isDirectory()) {
        if (path !== join(root, 'cli')) walk(path);
      } else if (/\.(js|ts)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) {
        hash
          .update(`${relative(root, path)}\0`)
          .update(readFileSync(path))
          .update('\0');
      }
    }
  };
  walk(root);
  return hash.digest('hex').slice(0, 16);
}

/** Seeds done, in little memory: every seed below `below`, and the few done above it. */
export class DoneSeeds {
  #below: number;
  readonly #above = new Set<number>();

  constructor(first: number, below = first, above: Iterable<number> = []) {
    this.#below = below;
    for (const seed of above) this.add(seed);
  }

  get below(): number {
    return this.#below;
  }

  get above(): number[] {
    return [...this.#above].sort((a, b) => a - b);
  }

  has(seed: number): boolean {
    return seed < this.#below || this.#above.has(seed);
  }

  add(seed: number): void {
    if (this.has(seed)) return;
    this.#above.add(seed);
    while (this.#above.delete(this.#below)) this.#below++;
  }
}

export interface WireProgress {
  readonly done: DoneSeeds;
  readonly tally: GateTally;
  /** Time spent running this wire's series in earlier runs of the checkpoint. */
  readonly elapsedMs: number;
}

export interface GateCheckpoint {
  readonly run: GateRun;
  readonly wires: ReadonlyMap<SimWireName, WireProgress>;
}

/** A checkpoint file that cannot be used as it is: damaged, of another format, or of another run. */
export class CheckpointError extends Error {}

const FORMAT = 'terminus-gate-checkpoint';
const count = z.number().int().nonnegative();
const pairs = <K extends z.ZodType>(key: K) => z.array(z.tuple([key, count]));
/** Counts a checkpoint written before they were counted may lack: read as 0. */
const ADDED_COUNTS: ReadonlySet<string> = new Set(['contradictions']);
const counts = z.object(
  Object.fromEntries(COUNTS.map((k) => [k, ADDED_COUNTS.has(k) ? count.default(0) : count])) as Record<
    (typeof COUNTS)[number],
    typeof count
  >,
);
const histograms = z.object(
  Object.fromEntries(HISTOGRAMS.map((k) => [k, pairs(z.number().int())])) as Record<
    (typeof HISTOGRAMS)[number],
    ReturnType<typeof pairs<z.ZodNumber>>
  >,
);
// A failing summary is printed, not computed on: its seed, plan and violations are checked, the rest kept.
const failing = z.looseObject({
  seed: count,
  plan: z.array(z.string()),
  violations: z.array(z.object({ invariant: z.string(), detail: z.string() })),
});
const file = z.object({
  format: z.literal(FORMAT),
  version: z.literal(1),
  run: z.object({
    seed: count,
    series: count,
    faults: z.array(z.string().refine(isFaultClass, 'not a fault class')).nullable(),
    wires: z.array(z.string().refine(isSimWire, 'not a wire')).min(1),
    code: z.string(),
  }),
  wires: z.record(
    z.string().refine(isSimWire, 'not a wire'),
    z.object({
      below: count,
      above: z.array(count),
      elapsedMs: z.number().nonnegative(),
      tally: z.object({
        counts,
        histograms,
        byInvariant: pairs(z.string()),
        faults: pairs(z.string()),
        states: pairs(z.string()),
        failing: z.array(failing),
        moreFailing: z.array(z.object({ seed: count, invariants: z.array(z.string()), crashed: z.boolean() })),
      }),
    }),
  ),
});

/** The checkpoint at `path`, or undefined when there is none yet. Throws `CheckpointError`. */
export async function readCheckpoint(path: string): Promise<GateCheckpoint | undefined> {
  let text: string;
  try {
    const handle = await open(path, 'r');
    try {
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new CheckpointError(`cannot read checkpoint ${path}: ${(error as Error).message}`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new CheckpointError(`checkpoint ${path} is not JSON (damaged?): ${(error as Error).message}`);
  }
  const parsed = file.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue === undefined ? '' : ` at ${issue.path.join('.') || 'the top'}: ${issue.message}`;
    throw new CheckpointError(`${path} is not a gate checkpoint, or is damaged${where}`);
  }
  const data = parsed.data;
  const run: GateRun = {
    seed: data.run.seed,
    series: data.run.series,
    faults: data.run.faults,
    wires: data.run.wires,
    code: data.run.code,
  };
  const wires = new Map<SimWireName, WireProgress>();
  for (const [name, w] of Object.entries(data.wires)) {
    const end = run.seed + run.series;
    if (
      !run.wires.includes(name as SimWireName) ||
      w.below < run.seed ||
      w.below > end ||
      w.above.some((s) => s < w.below || s >= end)
    ) {
      throw new CheckpointError(`checkpoint ${path} is damaged: its ${name} seeds lie outside the run`);
    }
    const tally = GateTally.restore(w.tally as unknown as TallySnapshot);
    const done = new DoneSeeds(run.seed, w.below, w.above);
    if (tally.series !== done.below - run.seed + w.above.length) {
      throw new CheckpointError(
        `checkpoint ${path} is damaged: ${name} counts ${tally.series} series for ${done.below - run.seed + w.above.length} seeds done`,
      );
    }
    wires.set(name as SimWireName, { done, tally, elapsedMs: w.elapsedMs });
  }
  return { run, wires };
}

/** How `saved` differs from `run` (the first difference), or undefined when it is the same run. */
export function otherRun(saved: GateRun, run: GateRun): string | undefined {
  const list = (x: readonly string[] | null): string => (x === null ? 'all' : x.join(','));
  if (saved.seed !== run.seed) return `--seed ${saved.seed} there, ${run.seed} here`;
  if (saved.series !== run.series) return `--series ${saved.series} there, ${run.series} here`;
  if (list(saved.faults) !== list(run.faults)) return `--faults ${list(saved.faults)} there, ${list(run.faults)} here`;
  if (list(saved.wires) !== list(run.wires)) return `--wire ${list(saved.wires)} there, ${list(run.wires)} here`;
  if (saved.code !== run.code) return `it began on other code: digest ${saved.code} there, ${run.code} here`;
  return undefined;
}

/**
 * Writes `checkpoint` to `path` atomically: a temporary file beside it, fsynced, renamed over it,
 * and the folder fsynced. On failure (a full disk) the temporary file is removed and the previous
 * checkpoint stays; the error is thrown.
 */
export async function writeCheckpoint(path: string, checkpoint: GateCheckpoint): Promise<void> {
  const body = {
    format: FORMAT,
    version: 1,
    run: checkpoint.run,
    wires: Object.fromEntries(
      [...checkpoint.wires].map(([name, w]) => [
        name,
        { below: w.done.below, above: w.done.above, elapsedMs: w.elapsedMs, tally: w.tally.snapshot() },
      ]),
    ),
  };
  const temporary = `${path}.${process.pid}.tmp`;
  try {
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(JSON.stringify(body));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  const folder = await open(dirname(path), 'r');
  try {
    await folder.sync();
  } finally {
    await folder.close();
  }
}
