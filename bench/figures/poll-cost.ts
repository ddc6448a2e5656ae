/**
 * Figure 4, second part: the poll cost per task of the adaptive poll interval our server suggests
 * (`src/runner/poll-interval.ts`) against a fixed one, for short, medium and long tasks, and what it
 * costs in detection delay (from the task's end to the poll that sees it). A model, not a timing:
 * a client that follows each hint exactly (clamped as our executor clamps it, C6) against a task of
 * known length, with the server's real interval function. Long tasks cannot be run in a bench; the
 * figures are exact for this client and deterministic.
 */
import { DEFAULT_POLICY } from '../../src/executor/operation.js';
import type { TaskRecord } from '../../src/core/task.js';
import { DEFAULT_MAX_POLL_INTERVAL_MS, suggestPollInterval } from '../../src/runner/poll-interval.js';
import type { Row } from '../lib/report.js';
import { summarize } from '../lib/stats.js';

/** The task lengths compared (ms). */
export const POLL_COST_TASKS = [
  { name: 'short', ms: 2_000 },
  { name: 'medium', ms: 60_000 },
  { name: 'long', ms: 15 * 60_000 },
] as const;

/** The fixed interval and the adaptive floor: the engine's default `pollIntervalMs`. */
const FLOOR_MS = 1_000;

export interface PollCost {
  readonly polls: number;
  /** From the task's end to the poll that saw it (ms). */
  readonly delayMs: number;
}

/** Polls a client makes for a task of `durationMs` when it waits `intervalAt(age)` after each answer. */
export function pollCost(durationMs: number, intervalAt: (ageMs: number) => number): PollCost {
  const clamp = (ms: number): number =>
    Math.min(DEFAULT_POLICY.maxPollIntervalMs, Math.max(DEFAULT_POLICY.minPollIntervalMs, ms));
  let at = 0;
  let polls = 0;
  while (at < durationMs) {
    at += clamp(intervalAt(at));
    polls += 1;
  }
  return { polls, delayMs: at - durationMs };
}

/** The interval our server suggests at `ageMs` for a working task, its tool's runs known or not. */
export function adaptiveAt(estimateMs: number | null): (ageMs: number) => number {
  const task = { status: 'working', createdAt: 0, pollIntervalMs: FLOOR_MS } as TaskRecord;
  return (ageMs) => suggestPollInterval(task, ageMs, estimateMs, DEFAULT_MAX_POLL_INTERVAL_MS);
}

export function pollCostRows(): Row[] {
  const rows: Row[] = [];
  const variants = [
    { variant: `fixed interval ${FLOOR_MS} ms`, at: () => () => FLOOR_MS },
    { variant: "adaptive interval, the tool's runs known", at: (ms: number) => adaptiveAt(ms) },
    { variant: 'adaptive interval, first run of the tool', at: () => adaptiveAt(null) },
  ];
  for (const task of POLL_COST_TASKS) {
    const setting = `${task.name} task (${task.ms / 1000} s), model client following each hint, floor ${FLOOR_MS} ms, cap ${DEFAULT_MAX_POLL_INTERVAL_MS} ms`;
    const fixed = pollCost(task.ms, () => FLOOR_MS);
    for (const { variant, at } of variants) {
      const cost = pollCost(task.ms, at(task.ms));
      rows.push({
        figure: 4,
        metric: 'polls per task (model)',
        variant,
        setting,
        value: summarize([cost.polls]),
        ratio: { to: 'fixed interval', value: cost.polls / fixed.polls },
      });
      rows.push({
        figure: 4,
        metric: 'detection delay after the end (ms, model)',
        variant,
        setting,
        value: summarize([cost.delayMs]),
      });
    }
  }
  return rows;
}
