/**
 * The acceptance gate: folds series summaries into the targets table of docs/simulation.md, plus the invariant,
 * liveness and coverage rows. Every row can fail; the gate passes only when all do.
 *
 * Where that table has two columns, the row's threshold is the seed's gate (the acceptance figures the
 * issue names: cancel confirmation p99 < 60 s, UNKNOWN reconciliation p99 < 15 min) and decides the
 * exit status; our stricter target (< 5 s, < 60 s) is measured against the same figure and printed
 * as met or MISSED beside it, so a miss is visible in every run without being hidden in the pass.
 * Cancel confirmation has a second row that does decide: our < 5 s target on the executor's share
 * (the time left once the Retry-Afters it must honour, downtime and expiry partitions are taken
 * out), the part a slower executor would lengthen.
 */
import { INVARIANTS, QPS_CAP } from './checks/invariants.js';
import { DELIVERY_FAULT_CLASSES, FAULT_CLASSES, PUSH_FAULT_CLASSES } from './faults.js';
import { LOCAL_STATES } from '../executor/operation.js';
import type { SeriesSummary } from './summary.js';
import { simWire, type SimWireName } from './wires/index.js';
import { applicableFaults } from './wires/series.js';
import { GateTally, type FailingSeed, type MsHistogram } from './tally.js';

/** Coverage is judged on runs of at least this many series (a one-series replay cannot cover). */
export const COVERAGE_MIN_SERIES = 200;
/** Each fault class must fire, and each ledger state be entered, at least this often per run. */
export const COVERAGE_MIN_HITS = 3;
/**
 * Ledger states the simulation cannot reach over the Tasks extension, with the reason. Listed, not
 * hidden: the coverage row names them.
 */
export const UNREACHABLE_STATES: Readonly<Record<string, string>> = {
  // EFFECT_RECONCILIATION_REQUIRED was listed until misbehaving servers (C13): `late_completion_shown`
  // reports a completion after the cancel won, which a correct server never does (S4).
};

export interface GateRow {
  readonly figure: string;
  readonly threshold: string;
  readonly measured: string;
  readonly pass: boolean;
  /** The stricter "our target", where it differs from the gate threshold. */
  readonly target?: { readonly threshold: string; readonly met: boolean };
}

export interface GateReport {
  /** The wire every series spoke. */
  readonly wire: SimWireName;
  readonly series: number;
  readonly rows: readonly GateRow[];
  readonly pass: boolean;
  /** Failing series in full (the first `KEPT_FAILURES`), in seed order. */
  readonly failing: readonly SeriesSummary[];
  /** Failing series past those: seed and invariants, for the replay commands. */
  readonly moreFailing: readonly FailingSeed[];
  readonly wallMs: number;
}

/** Folds `summaries` and reports; `gateReportOf` does the same on a tally folded as series ended. */
export function gateReport(
  summaries: readonly SeriesSummary[],
  wallMs: number,
  wireName: SimWireName = summaries[0]?.wire ?? 'mcp-tasks-ext',
): GateReport {
  const tally = new GateTally();
  for (const s of summaries) tally.add(s);
  return gateReportOf(tally, wallMs, wireName);
}

/**
 * The gate table of one wire's series, from a tally folded as they ended. Coverage asks for the
 * fault classes that apply to the wire and the ledger states it can reach; the others are the
 * wire's listed exemptions (`notApplicable`, `unreachableStates`), printed with their reasons.
 */
export function gateReportOf(tally: GateTally, wallMs: number, wireName: SimWireName = 'mcp-tasks-ext'): GateReport {
  const wire = simWire(wireName);
  const classes = applicableFaults(wire, FAULT_CLASSES);
  const unreachable: Readonly<Record<string, string>> = { ...UNREACHABLE_STATES, ...wire.unreachableStates };
  const { divergences, polls, peakPollsPerSecond: peak, outboxRows: rows, outboxTraced: traced } = tally;
  const { secondOperations: second, duplicateSubmissions: duplicates, idealPolls: ideal } = tally;
  const { byInvariant, faults, states, unknownByHand: byHand } = tally;
  const p99 = (h: MsHistogram): number => h.quantile(0.99);
  const cancel = tally.cancel;
  const cancelOwn = tally.cancelOwn;
  const unknown = tally.unknown;
  const unknownOwn = tally.unknownOwn;
  const series = tally.series;
  const ratio = ideal === 0 ? 1 : polls / ideal;
  const out: GateRow[] = [
    row('terminal-state divergence', '0', `${divergences} in ${series}`, divergences === 0),
    row(
      'second operations from duplicate submissions',
      '0',
      `${second} (${duplicates} duplicate submissions)`,
      second === 0,
    ),
    row('poll rate per operation', `<= ${QPS_CAP}/s`, `max ${peak}/s`, peak <= QPS_CAP),
    row('polls per task vs ideal', '<= 1.20x', `${ratio.toFixed(3)}x (${polls}/${ideal})`, ratio <= 1.2),
    {
      ...row(
        'cancel confirmation p99',
        '< 60 s',
        `${(p99(cancel) / 1000).toFixed(2)} s (n=${cancel.count})`,
        p99(cancel) < 60_000,
      ),
      target: { threshold: '< 5 s', met: p99(cancel) < 5_000 },
    },
    // Our target again, on the part of each confirmation the executor controls: the raw figure also
    // holds the Retry-Afters it must honour (C6), downtime and expiry partitions.
    row(
      'cancel confirmation p99, executor share',
      '< 5 s (our target)',
      `${(p99(cancelOwn) / 1000).toFixed(2)} s (n=${cancelOwn.count})`,
      p99(cancelOwn) < 5_000,
    ),
    {
      ...row(
        'UNKNOWN reconciliation p99',
        '< 15 min',
        `${(p99(unknown) / 1000).toFixed(2)} s (n=${unknown.count})` +
          (wire.keyLookup ? '' : `, ${byHand} to an operator (no key lookup)`),
        p99(unknown) < 15 * 60_000,
      ),
      target: { threshold: '< 60 s', met: p99(unknown) < 60_000 },
    },
    // Our target on what the executor controls: an UNKNOWN it handed to an operator (no request it
    // may send can settle it: an expired task's key, a plain call sent without one) is timed to the
    // hand-over; the raw row times it to the series end.
    row(
      'UNKNOWN reconciliation p99, executor share',
      '< 60 s (our target)',
      `${(p99(unknownOwn) / 1000).toFixed(2)} s (n=${unknownOwn.count}, ${tally.unknownHandedOver} handed to an operator, ${tally.contradictions} contradictions)`,
      p99(unknownOwn) < 60_000,
    ),
    row(
      'downstream advances traceable to a receipt',
      '100%',
      `${rows === 0 ? 100 : ((traced / rows) * 100).toFixed(2)}% (${traced}/${rows})`,
      traced === rows,
    ),
  ];
  for (const inv of INVARIANTS) {
    const n = byInvariant.get(inv) ?? 0;
    out.push(row(`${inv} violations`, '0', `${n} series`, n === 0));
  }
  const errors = byInvariant.get('series error') ?? 0;
  out.push(row('series that crashed', '0', `${errors}`, errors === 0));
  if (series >= COVERAGE_MIN_SERIES) {
    const thinFaults = classes.filter((f) => (faults.get(f) ?? 0) < COVERAGE_MIN_HITS);
    out.push(
      row(
        'coverage: fault classes fired',
        `each >= ${COVERAGE_MIN_HITS}`,
        thinFaults.length === 0
          ? `all ${classes.length} (min ${Math.min(...classes.map((f) => faults.get(f) ?? 0))})`
          : `short: ${thinFaults.map((f) => `${f}=${faults.get(f) ?? 0}`).join(', ')}`,
        thinFaults.length === 0,
      ),
    );
    // Push streams (issue 17 item 2), on the wires whose executor listens: each push fault class,
    // by name, so a thin one shows which.
    if (wire.pushes !== undefined) {
      const thinPush = PUSH_FAULT_CLASSES.filter((f) => (faults.get(f) ?? 0) < COVERAGE_MIN_HITS);
      out.push(
        row(
          'coverage: push fault classes fired',
          `each >= ${COVERAGE_MIN_HITS}`,
          PUSH_FAULT_CLASSES.map((f) => `${f.replace('push_', '')}=${faults.get(f) ?? 0}`).join(' '),
          thinPush.length === 0,
        ),
      );
    }
    // Webhook deliveries and event readers (issue 32): each class that applies to the wire, by name.
    const delivery = applicableFaults(wire, DELIVERY_FAULT_CLASSES);
    const thinDelivery = delivery.filter((f) => (faults.get(f) ?? 0) < COVERAGE_MIN_HITS);
    out.push(
      row(
        'coverage: webhook and event-reader classes fired',
        `each >= ${COVERAGE_MIN_HITS}`,
        delivery.map((f) => `${f}=${faults.get(f) ?? 0}`).join(' '),
        thinDelivery.length === 0,
      ),
    );
    const wanted = LOCAL_STATES.filter((st) => !(st in unreachable));
    const thinStates = wanted.filter((st) => (states.get(st) ?? 0) < COVERAGE_MIN_HITS);
    out.push(
      row(
        'coverage: ledger states entered',
        Object.keys(unreachable).length === 0
          ? `each >= ${COVERAGE_MIN_HITS}`
          : `each >= ${COVERAGE_MIN_HITS} (${Object.keys(unreachable).join(', ')} exempt)`,
        thinStates.length === 0
          ? `all ${wanted.length} (min ${Math.min(...wanted.map((st) => states.get(st) ?? 0))})`
          : `short: ${thinStates.map((st) => `${st}=${states.get(st) ?? 0}`).join(', ')}`,
        thinStates.length === 0,
      ),
    );
  } else {
    out.push(row('coverage', `judged on >= ${COVERAGE_MIN_SERIES} series`, 'n/a', true));
  }
  return {
    wire: wireName,
    series: tally.series,
    rows: out,
    pass: out.every((r) => r.pass),
    failing: tally.sortedFailing(),
    moreFailing: tally.moreFailing,
    wallMs,
  };
}

function row(figure: string, threshold: string, measured: string, pass: boolean): GateRow {
  return { figure, threshold, measured, pass };
}

export function formatGate(report: GateReport): string {
  const widths = [46, 26, 40];
  const line = (cells: string[], mark: string) =>
    `${cells.map((c, i) => c.padEnd(widths[i] ?? 10)).join('  ')}  ${mark}`;
  const out = [line(['figure', 'threshold', 'measured'], 'result'), '-'.repeat(126)];
  for (const r of report.rows) {
    const target =
      r.target === undefined ? '' : `  (our target ${r.target.threshold}: ${r.target.met ? 'met' : 'MISSED'})`;
    out.push(line([r.figure, r.threshold, r.measured], (r.pass ? 'pass' : 'FAIL') + target));
  }
  out.push('-'.repeat(126));
  out.push(`${report.series} series in ${(report.wallMs / 1000).toFixed(1)} s: ${report.pass ? 'PASS' : 'FAIL'}`);
  return out.join('\n');
}

/** One row of the per-wire table (`terminus gate --wire all`): the figures of one wire's report. */
export interface WireRow {
  readonly wire: SimWireName;
  readonly series: number;
  readonly pass: boolean;
  readonly divergence: string;
  readonly secondOperations: string;
  readonly pollsVsIdeal: string;
  readonly cancelP99: string;
  readonly unknownP99: string;
  readonly coverage: string;
}

/** The per-wire row of a report, read off its table rows (so both say the same). */
export function wireRow(report: GateReport): WireRow {
  const at = (figure: string): GateRow | undefined => report.rows.find((r) => r.figure === figure);
  const cell = (figure: string): string => {
    const r = at(figure);
    const measured = figure.startsWith('UNKNOWN') ? r?.measured : r?.measured.split(' (')[0];
    return r === undefined ? '-' : `${measured ?? r.measured}${r.pass ? '' : ' FAIL'}`;
  };
  const coverage = report.rows.filter((r) => r.figure.startsWith('coverage'));
  return {
    wire: report.wire,
    series: report.series,
    pass: report.pass,
    divergence: cell('terminal-state divergence'),
    secondOperations: cell('second operations from duplicate submissions'),
    pollsVsIdeal: cell('polls per task vs ideal'),
    cancelP99: cell('cancel confirmation p99'),
    // The p99, and on a wire without key lookup how many were left to an operator.
    unknownP99: cell('UNKNOWN reconciliation p99').replace(/ \(no key lookup\)| \(n=\d+\)/g, ''),
    coverage:
      coverage.length === 1 && coverage[0]?.measured === 'n/a'
        ? 'n/a'
        : coverage.every((r) => r.pass)
          ? 'full'
          : coverage
              .filter((r) => !r.pass)
              .map((r) => r.measured)
              .join('; '),
  };
}

/** The per-wire table: one row per wire, then each wire's not-applicable fault classes and reasons. */
export function formatWireTable(reports: readonly GateReport[]): string {
  const head = [
    'wire',
    'series',
    'wall',
    'result',
    'divergence',
    'second ops',
    'polls/ideal',
    'cancel p99',
    'UNKNOWN p99',
    'coverage',
  ];
  const rows = reports.map((r) => {
    const w = wireRow(r);
    return [
      w.wire,
      String(w.series),
      `${(r.wallMs / 1000).toFixed(1)} s`,
      w.pass ? 'pass' : 'FAIL',
      w.divergence,
      w.secondOperations,
      w.pollsVsIdeal,
      w.cancelP99,
      w.unknownP99,
      w.coverage,
    ];
  });
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i] ?? 0))
      .join('  ')
      .trimEnd();
  const rule = '-'.repeat(widths.reduce((a, b) => a + b + 2, -2));
  const out = [line(head), rule, ...rows.map(line), rule];
  for (const r of reports) {
    const wire = simWire(r.wire);
    for (const [fault, reason] of Object.entries(wire.notApplicable))
      out.push(`${r.wire}: ${fault} not applicable: ${reason}`);
    if (wire.noDuplicate !== undefined) {
      out.push(
        `${r.wire}: duplicate not applied to ${wire.noDuplicate.roles.join(', ')} requests: ${wire.noDuplicate.reason}`,
      );
    }
  }
  const total = reports.reduce((n, r) => n + r.series, 0);
  const wall = reports.reduce((n, r) => n + r.wallMs, 0);
  out.push(
    `${reports.length} wires, ${total} series in ${(wall / 1000).toFixed(1)} s: ${reports.every((r) => r.pass) ? 'PASS' : 'FAIL'}`,
  );
  return out.join('\n');
}
