/**
 * The poll interval a task suggests, adapted to the task (issue 32): from how long its tool's runs
 * have taken on this node, and how long the task has been going. Short at first and for short
 * work, longer for long work, never above the cap, never below the tool's own `pollIntervalMs`
 * (or the engine's default), which is the floor. Pure apart from the per-tool estimates, which
 * come from run ends the runner reports with the injected clock's times: deterministic.
 */
import { isTerminal, type TaskRecord } from '../core/task.js';
import type { RunOutcome } from './observer.js';

/** Default cap of a suggested interval (ms): below the executor's 60 s ceiling, so clients keep it. */
export const DEFAULT_MAX_POLL_INTERVAL_MS = 30_000;

/** A suggested interval is this fraction of the time still expected (or, past it, of the task's age). */
const FRACTION = 4;

/** Weight of the newest run in a tool's running estimate (an exponentially weighted mean of log durations). */
const WEIGHT = 0.2;

/** Run ends that say how long the tool takes (a crash or a lost lease says nothing about it). */
const MEASURED: readonly RunOutcome[] = ['completed', 'failed'];

/** A per-tool running estimate of how long a run takes, on this node. */
export class DurationEstimates {
  private readonly logMs = new Map<string, number>();

  /** One run of `tool` ended after `runMs`. */
  observe(tool: string, runMs: number, outcome: RunOutcome): void {
    if (!MEASURED.includes(outcome) || !Number.isFinite(runMs) || runMs < 0) return;
    const sample = Math.log(Math.max(1, runMs));
    const before = this.logMs.get(tool);
    this.logMs.set(tool, before === undefined ? sample : before + WEIGHT * (sample - before));
  }

  /** The typical run of `tool` (ms), or null before any run of it ended here. */
  estimate(tool: string): number | null {
    const log = this.logMs.get(tool);
    return log === undefined ? null : Math.exp(log);
  }
}

/**
 * The interval to suggest for `task` at `now`: a quarter of the time its tool's runs are still
 * expected to take; once it outlasted that, a quarter of the time since (with nothing known yet,
 * of its age); between `task.pollIntervalMs` (the floor) and `capMs`. A terminal task keeps its floor.
 * @example
 * suggestPollInterval(task, now, 60_000, 30_000); // at creation: 15 000; after 59 s: the floor
 */
export function suggestPollInterval(
  task: Pick<TaskRecord, 'status' | 'createdAt' | 'pollIntervalMs'>,
  now: number,
  estimateMs: number | null,
  capMs: number,
): number {
  const floor = task.pollIntervalMs;
  if (isTerminal(task.status) || !Number.isFinite(floor) || floor <= 0) return floor;
  const age = Math.max(0, now - task.createdAt);
  const expected = estimateMs ?? 0;
  // Before the expected end: a fraction of what is left; past it, backing off from it again.
  const basis = age < expected ? expected - age : age - expected;
  return Math.round(Math.min(Math.max(floor, capMs), Math.max(floor, basis / FRACTION)));
}
