/**
 * What a run produces (rows per figure, targets, the machine) and its two renderings: a markdown
 * table for people and JSON for tools.
 */
import type { Summary } from './stats.js';

export interface Row {
  readonly figure: number;
  /** What is measured, with its unit: `submissions/s`, `tasks/get p99 (ms)`. */
  readonly metric: string;
  readonly variant: string;
  /** Transport, concurrency, size, mode. */
  readonly setting: string;
  /** Median and range across rounds; absent when the row did not run. */
  readonly value?: Summary;
  /** Ratio of the medians to the row's baseline. */
  readonly ratio?: { readonly to: string; readonly value: number };
  readonly note?: string;
  /** Why the row did not run (`value` is absent). */
  readonly notRun?: string;
}

export interface Target {
  readonly name: string;
  /** Human form of the goal: `>= 0.5x B0`. */
  readonly goal: string;
  readonly measured: number | undefined;
  readonly unit: string;
  readonly met: boolean | undefined;
  /** Signed distance to the goal, in the goal's terms: `+0.31x`, `-4.2 ms`. */
  readonly margin: string;
  readonly note?: string;
  /** The issue that set the target; absent: issue 7 (the harness's first targets). */
  readonly issue?: number;
}

/**
 * A ratio target: `measured` against `bound` (`atLeast`: measured >= bound; else measured <= bound),
 * `unit` naming what the ratio is of (`x B0`). `reason` set: not measured (PostgreSQL absent, a
 * sample that came out empty), judged neither met nor missed.
 */
export function ratioTarget(spec: {
  readonly name: string;
  readonly measured: number;
  readonly bound: number;
  readonly atLeast: boolean;
  readonly unit: string;
  readonly detail?: string;
  readonly reason?: string;
  readonly issue?: number;
}): Target {
  const goal = `${spec.atLeast ? '>=' : '<='} ${fmt(spec.bound)}${spec.unit}`;
  const issue = spec.issue === undefined ? {} : { issue: spec.issue };
  if (spec.reason !== undefined || !Number.isFinite(spec.measured)) {
    return {
      ...issue,
      name: spec.name,
      goal,
      measured: undefined,
      unit: spec.unit.trim(),
      met: undefined,
      margin: `not measured: ${spec.reason ?? 'no finite sample'}`,
    };
  }
  const slack = spec.atLeast ? spec.measured - spec.bound : spec.bound - spec.measured;
  return {
    ...issue,
    name: spec.name,
    goal,
    measured: spec.measured,
    unit: spec.unit.trim(),
    met: slack >= 0,
    margin: `${slack >= 0 ? '+' : '-'}${fmt(Math.abs(slack))}x${spec.detail === undefined ? '' : ` (${spec.detail})`}`,
  };
}

export interface Machine {
  readonly cores: number;
  readonly cpu: string;
  readonly memoryGiB: number;
  readonly node: string;
  readonly platform: string;
  /** write+fsync of 4 KiB per iteration, in the directory holding the databases. */
  readonly fsyncPerSecond: Summary;
  readonly date: string;
  /** 1-minute load average at the start and the end of the run (other work on the machine). */
  readonly loadAverage?: { readonly start: number; readonly end: number };
  /** How server processes ran: bundled with esbuild, or under tsx. */
  readonly processes?: 'esbuild' | 'tsx';
  /** Where servers under load and the load generator ran (`bench/lib/pin.ts`). */
  readonly load?: string;
}

export interface BenchReport {
  readonly command: string;
  readonly machine: Machine;
  readonly rounds: number;
  readonly quick: boolean;
  readonly rows: readonly Row[];
  readonly targets: readonly Target[];
  readonly durationSeconds: number;
  /** Wall time of each figure runner, in run order: what sizes the full run's duration. */
  readonly figureSeconds?: readonly { readonly figures: string; readonly seconds: number }[];
}

export const FIGURE_TITLES: Record<number, string> = {
  1: 'Durable task submissions per second',
  2: 'tasks/get latency with open tasks in the store',
  3: 'Completion-to-acceptance latency (server terminal commit -> client acceptance)',
  4: 'Polls per task over a lognormal mix of durations',
  5: 'Overhead of a 0 ms tool run as a task',
  6: 'Memory per open task and per ledger entry',
  7: 'Recovery after kill -9',
  8: 'tasks/get throughput and latency, HTTP and stdio (issue 14)',
  9: "The runner's claim against the backlog (issue 14)",
  10: "Another caller's tasks/get while 16 CPU-bound handlers run (issue 14)",
  11: 'Commits per task: created claimed (two) vs claimed by the loop (three) (issue 14)',
  12: 'PostgreSQL against pg-boss and graphile-worker: jobs/s and add-to-start (issue 31)',
  13: 'Several nodes on one PostgreSQL: throughput, double claims, re-claim after kill -9 (issue 31)',
};

/** Three significant digits, no exponent for the sizes we print. */
export function fmt(value: number | undefined): string {
  if (value === undefined || !Number.isFinite(value)) return 'n/a';
  const abs = Math.abs(value);
  if (abs >= 1000) return Math.round(value).toLocaleString('en-US');
  if (abs >= 100) return value.toFixed(0);
  if (abs >= 10) return value.toFixed(1);
  if (abs >= 1) return value.toFixed(2);
  return value.toPrecision(2);
}

const cell = (text: string): string => text.replace(/\|/g, '\\|');

export function renderMarkdown(report: BenchReport): string {
  const m = report.machine;
  const lines: string[] = [];
  lines.push(`# mcp-terminus benchmarks${report.quick ? ' (quick smoke run: counts too small to mean anything)' : ''}`);
  lines.push('');
  lines.push(`- command: \`${report.command}\``);
  lines.push(`- machine: ${m.cores} cores (${m.cpu}), ${m.memoryGiB} GiB, ${m.platform}, node ${m.node}; ${m.date}`);
  if (m.loadAverage !== undefined) {
    lines.push(
      `- load average (1 min) ${m.loadAverage.start.toFixed(1)} at the start, ${m.loadAverage.end.toFixed(1)} at the end (other work on the machine); server processes ${m.processes === 'tsx' ? 'under tsx' : 'bundled with esbuild, run by plain node'}`,
    );
  }
  if (m.load !== undefined) lines.push(`- load: ${m.load}`);
  lines.push(
    `- fsync rate (4 KiB write+fsync, databases' directory): median ${fmt(m.fsyncPerSecond.median)}/s (range ${fmt(m.fsyncPerSecond.min)}-${fmt(m.fsyncPerSecond.max)})`,
  );
  lines.push(
    `- ${report.rounds} interleaved round(s) per figure; values are medians over rounds with [min-max]; ratios are of medians, measured in the same run (${report.durationSeconds.toFixed(0)} s)`,
  );
  if (report.figureSeconds !== undefined && report.figureSeconds.length > 0) {
    lines.push(
      `- time per figure: ${report.figureSeconds.map((f) => `${f.figures} ${f.seconds.toFixed(0)} s`).join(', ')}`,
    );
  }
  lines.push('');
  const issues = [...new Set(report.targets.map((t) => t.issue ?? 7))].sort((a, b) => a - b);
  for (const [index, issue] of issues.entries()) {
    const targets = report.targets.filter((t) => (t.issue ?? 7) === issue);
    if (index > 0) lines.push('');
    lines.push(`## Targets of issue ${issue}`);
    lines.push('');
    lines.push('| target | goal | measured | result | margin |');
    lines.push('| --- | --- | --- | --- | --- |');
    for (const t of targets) {
      const result = t.met === undefined ? 'not measured' : t.met ? 'met' : 'MISSED';
      const measured = t.measured === undefined ? 'n/a' : `${fmt(t.measured)} ${t.unit}`;
      lines.push(
        `| ${cell(t.name)} | ${cell(t.goal)} | ${cell(measured)} | ${result} | ${cell(t.margin + (t.note === undefined ? '' : ` (${t.note})`))} |`,
      );
    }
  }
  const figures = [...new Set(report.rows.map((r) => r.figure))].sort((a, b) => a - b);
  for (const figure of figures) {
    lines.push('');
    lines.push(`## ${figure}. ${FIGURE_TITLES[figure] ?? ''}`);
    lines.push('');
    lines.push('| metric | variant | setting | median | range | ratio | note |');
    lines.push('| --- | --- | --- | --- | --- | --- | --- |');
    for (const r of report.rows.filter((row) => row.figure === figure)) {
      const median = r.value === undefined ? `not run: ${r.notRun ?? 'unknown'}` : fmt(r.value.median);
      const range = r.value === undefined ? '' : `${fmt(r.value.min)}-${fmt(r.value.max)}`;
      const ratio = r.ratio === undefined ? '' : `${fmt(r.ratio.value)}x ${r.ratio.to}`;
      lines.push(
        `| ${cell(r.metric)} | ${cell(r.variant)} | ${cell(r.setting)} | ${cell(median)} | ${range} | ${cell(ratio)} | ${cell(r.note ?? '')} |`,
      );
    }
  }
  return `${lines.join('\n')}\n`;
}
