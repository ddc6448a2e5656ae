#!/usr/bin/env node
// Reads the results of the official conformance suite's server runs (scripts/conformance.sh) and
// decides: every scenario it listed must have run and passed, unless scripts/conformance-skips.json
// names it (or one of its checks) with the reason it does not apply. Prints a table and exits 1 on
// any failure and on a listed scenario that did not run.
//
//   node scripts/conformance-report.mjs --listing FILE --run default=DIR --run 2026-07-28=DIR [--route install]
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import process from 'node:process';
import { URL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    listing: { type: 'string' },
    run: { type: 'string', multiple: true },
    route: { type: 'string' },
  },
});
const skips = JSON.parse(readFileSync(new URL('./conformance-skips.json', import.meta.url), 'utf8'));
const route = values.route === undefined ? {} : (skips[values.route] ?? {});
const skippedScenario = (name) => route.scenarios?.[name] ?? skips.scenarios[name];
const skippedCheck = (name, id) => route.checks?.[name]?.[id] ?? skips.checks[name]?.[id];

// `  - tools-list [2025-06-18,2025-11-25,2026-07-28]` or `  - tasks-lifecycle [extension]`
const listed = new Map();
for (const line of readFileSync(values.listing, 'utf8').split('\n')) {
  const m = /^\s*-\s+([a-z0-9-]+)\s+\[([^\]]*)\]/.exec(line);
  if (m) listed.set(m[1], m[2].split(','));
}
const modernOnly = (versions) => versions.every((v) => v === '2026-07-28' || v === 'extension');

/** The wire a scenario ran at: the runner's own default when no --spec-version is given. */
const wireOf = (run, versions) =>
  run !== 'default'
    ? run
    : versions.includes('extension')
      ? 'extension'
      : modernOnly(versions)
        ? '2026-07-28'
        : '2025-11-25';

const rows = [];
const failed = [];
for (const spec of values.run ?? []) {
  const [run, dir] = spec.split('=');
  const results = new Map();
  for (const entry of readdirSync(dir)) {
    const name = entry.replace(/^server-/, '').replace(/-\d{4}-\d\d-\d\dT[\d-]+Z$/, '');
    results.set(name, JSON.parse(readFileSync(join(dir, entry, 'checks.json'), 'utf8')));
  }
  for (const [name, versions] of listed) {
    // The 2026-07-28 pass is for the scenarios the default pass ran at 2025-11-25.
    if (run !== 'default' && (modernOnly(versions) || !versions.includes(run))) continue;
    const wire = wireOf(run, versions);
    const checks = results.get(name);
    if (checks === undefined) {
      rows.push([name, wire, 'FAIL: did not run', '', '']);
      failed.push(`${name} (${wire})`);
      continue;
    }
    const counted = checks.filter((c) => c.status !== 'INFO');
    const passed = counted.filter((c) => c.status === 'SUCCESS').length;
    const warnings = counted.filter((c) => c.status === 'WARNING').length;
    const failures = counted.filter((c) => c.status === 'FAILURE');
    const excused = failures.filter((c) => skippedCheck(name, c.id) !== undefined);
    const real = failures.filter((c) => skippedCheck(name, c.id) === undefined);
    const reason = skippedScenario(name);
    let result;
    if (reason !== undefined) {
      result = `skipped: ${reason}`;
    } else if (real.length > 0) {
      result = `FAIL: ${real.map((c) => `${c.id}: ${c.errorMessage ?? c.description}`).join('; ')}`;
      failed.push(`${name} (${wire})`);
    } else if (passed === 0) {
      result = 'skipped by the suite';
    } else {
      result =
        excused.length > 0
          ? `pass (${excused.map((c) => `${c.id} skipped: ${skippedCheck(name, c.id)}`).join('; ')})`
          : 'pass';
    }
    rows.push([name, wire, result, `${passed}/${counted.length}`, String(warnings)]);
  }
}

const lines = ['| scenario | wire | result | checks passed | warnings |', '| --- | --- | --- | --- | --- |'];
for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
process.stderr.write(`${lines.join('\n')}\n\n`);
const counts = (prefix) => rows.filter((r) => r[2].startsWith(prefix)).length;
process.stderr.write(
  `${rows.length} scenario runs: ${counts('pass')} passed, ${counts('skipped')} skipped, ${failed.length} failed\n`,
);
if (failed.length > 0) {
  process.stderr.write(`failed: ${failed.join(', ')}\n`);
  process.exit(1);
}
