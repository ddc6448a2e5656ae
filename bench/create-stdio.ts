/**
 * `npx tsx bench/create-stdio.ts [--creates 2000] [--db FILE|postgres://...] [--commit-delay-ms N] [--with-result] [--profile DIR]`:
 * figure 1's one-client stdio row alone (with `--with-result`, figure 5's: each create followed by
 * its blocking `tasks/result`). One `bench/servers/terminus.ts` over stdio (2025-11-25),
 * `--creates` task-augmented `tools/call`s of the 0 ms `bench_sleep`, one at a time (each waits for
 * its answer, which the server sends once the create is durable), after 200 unmeasured ones; prints
 * creates/s and the server's CPU per create read from `/proc` (user + system). With `--profile` the
 * server runs under `--cpu-prof` (summary: `npx tsx bench/profile-costs.ts DIR/*.cpuprofile N`).
 * Written for issue 31 (one-client stdio submissions against B0): what one create costs.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initialize, stdioClient } from './client/rpc.js';
import { submitTask, taskResult } from './client/tasks.js';
import { ROOT } from './lib/root.js';

const { values } = parseArgs({
  options: {
    creates: { type: 'string', default: '2000' },
    db: { type: 'string' },
    profile: { type: 'string' },
    'commit-delay-ms': { type: 'string' },
    'with-result': { type: 'boolean', default: false },
  },
});
const creates = Number(values.creates);
const dir = mkdtempSync(join(tmpdir(), 'terminus-create-stdio-'));
const db = values.db ?? join(dir, 'tasks.db');
const profile = values.profile === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', values.profile];
const child = spawn(
  process.execPath,
  [
    ...profile,
    '--import',
    'tsx',
    'bench/servers/terminus.ts',
    '--transport',
    'stdio',
    '--db',
    db,
    ...(values['commit-delay-ms'] === undefined ? [] : ['--commit-delay-ms', values['commit-delay-ms']]),
  ],
  { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] },
);
child.stderr.pipe(process.stderr);
const client = stdioClient(child);
await initialize(client);

/** The server's CPU time so far (ms, user and system), from /proc (Linux). */
function cpuMs(pid: number): { user: number; system: number } {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
  return { user: (Number(fields[11]) * 1000) / 100, system: (Number(fields[12]) * 1000) / 100 };
}

/** One create (and, with `--with-result`, its blocking result read). */
async function one(): Promise<void> {
  const { taskId } = await submitTask(client, 'bench_sleep', { ms: 0 });
  if (values['with-result']) await taskResult(client, taskId);
}

for (let i = 0; i < 200; i += 1) await one();
const cpu = cpuMs(child.pid!);
const start = performance.now();
for (let i = 0; i < creates; i += 1) await one();
const seconds = (performance.now() - start) / 1000;
const after = cpuMs(child.pid!);
const each = (ms: number): string => ((ms * 1000) / creates).toFixed(0);
console.log(
  `${creates} creates${values['with-result'] ? ' each with its blocking tasks/result' : ''}, one at a time: ${(creates / seconds).toFixed(0)}/s, ` +
    `${((seconds * 1e6) / creates).toFixed(0)} us each, server CPU ` +
    `${each(after.user - cpu.user + after.system - cpu.system)} us each ` +
    `(user ${each(after.user - cpu.user)}, system ${each(after.system - cpu.system)}) ` +
    `(load ${(await import('node:os')).loadavg()[0]!.toFixed(2)})`,
);
await client.close();
await new Promise((resolve) => child.once('exit', resolve));
rmSync(dir, { recursive: true, force: true });
