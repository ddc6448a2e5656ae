import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * The walls of src/ (`.dependency-cruiser.mjs`): no import cycle, type-only imports included; each
 * folder imports only the layers below it (core, sql, store, runner, executor, telemetry, server,
 * tools, console, bridge, sim, testing, cli); the executor imports neither the store nor the
 * runner; only src/cli/ imports commander or is imported from src/cli/. Each violation is named.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const DEPCRUISE = resolve(ROOT, 'node_modules/dependency-cruiser/bin/dependency-cruise.mjs');

interface Violation {
  readonly from: string;
  readonly to: string;
  readonly rule: { readonly name: string };
  readonly cycle?: readonly { readonly name: string }[];
}

interface CruiseResult {
  readonly summary: { readonly violations: readonly Violation[]; readonly totalCruised: number };
}

function cruise(): CruiseResult {
  const run = spawnSync(
    process.execPath,
    [DEPCRUISE, '--config', '.dependency-cruiser.mjs', '--output-type', 'json', 'src'],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 256 * 1024 * 1024 },
  );
  if (run.error !== undefined) throw run.error;
  // Exit 0 when clean, the number of errors otherwise: the JSON on stdout says which.
  if (run.stdout.trim() === '')
    throw new Error(`dependency-cruiser printed nothing (exit ${run.status}): ${run.stderr}`);
  return JSON.parse(run.stdout) as CruiseResult;
}

function describeViolation(v: Violation): string {
  const path = v.cycle === undefined ? `${v.from} -> ${v.to}` : [v.from, ...v.cycle.map((c) => c.name)].join(' -> ');
  return `${v.rule.name}: ${path}`;
}

describe('layout: the layers and cycles of src/', () => {
  it('has no import cycle and no import against the layer order', { timeout: 180_000 }, () => {
    const result = cruise();
    expect(result.summary.totalCruised).toBeGreaterThan(100);
    expect(result.summary.violations.map(describeViolation)).toEqual([]);
  });
});
