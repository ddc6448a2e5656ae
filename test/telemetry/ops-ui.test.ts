import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { createEngine } from '../../src/runner/engine.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import { text, tool, until } from '../runner/helpers.js';

const CLI = join(resolve(import.meta.dirname, '../..'), 'dist/cli/main.js');
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('terminus ops ui (built CLI)', () => {
  it('lists the ledger by state and shows an operation’s history, evidence and receipt', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'terminus-ui-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'ledger.db');

    // One call that completes on a real server...
    const store = createMemoryTaskStore();
    const quick = tool('quick', async () => text('quick done'), { pollIntervalMs: 50, taskSupport: 'required' });
    const engine = createEngine({ store, tools: [quick], clock: systemClock, ids: systemIds, claimIntervalMs: 20 });
    engine.start();
    const http = await createTerminusServer({ engine }).serveHttp({ port: 0 });
    cleanup.push(
      () => engine.stop(),
      () => http.close(),
    );
    // ...and one sent to a server that takes the request and never answers: in doubt, with evidence.
    const silent: Server = createServer(() => {});
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    cleanup.push(() => (silent.closeAllConnections(), new Promise((r) => silent.close(r))));
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/mcp`;

    const ledger = openSqliteLedger({ path });
    const executor = await createExecutor({
      ledger,
      connect: (server) =>
        connectServer(
          { url: server === 'good' ? http.url : silentUrl },
          // The silent server's request times out fast; the good one's only on a stalled machine (a
          // 300 ms limit there lost the submit under load and the history took the key-lookup path).
          { clock: systemClock, wire: 'mcp-tasks-ext', timeoutMs: server === 'good' ? 30_000 : 300 },
        ),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      qps: 200,
      policy: { minPollIntervalMs: 50, backoffBaseMs: 50 },
    });
    const good = await executor.submit({ callNodeId: 'call-good', server: 'good', tool: 'quick', args: {} });
    const receipt = await good.result();
    const doubt = await executor.submit({ callNodeId: 'call-doubt', server: 'silent', tool: 'quick', args: {} });
    await until(async () => ((await ledger.load(doubt.operationId))?.evidence.length ?? 0) > 0, 'evidence', 15_000);
    await executor.close();
    const stateOfDoubt = (await ledger.load(doubt.operationId))?.state;
    await ledger.close();

    const child: ChildProcess = spawn(process.execPath, [CLI, 'ops', 'ui', '--ledger', path, '--port', '0'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.push(() => child.kill('SIGKILL'));
    const base = await new Promise<string>((resolveUrl, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        const match = /on (http:\/\/\S+)\/ui/.exec(out);
        if (match) resolveUrl(match[1]!);
      });
      child.once('exit', (code) => reject(new Error(`ops ui exited ${code}`)));
    });

    const home = await (await fetch(`${base}/ui`)).text();
    // The ledger's pages have no sign-in: the header says so, and does not claim anyone signed in.
    expect(home).toContain('<small>read-only, no sign-in</small>');
    expect(home).not.toContain('signed in as');
    expect(home).toContain('<strong data-state="ACCEPTED">1</strong>');
    expect(home).toContain(`<strong data-state="${stateOfDoubt}">1</strong>`);
    // The unsettled list holds the call in doubt, not the accepted one.
    expect(home).toContain(`data-operation="${doubt.operationId}"`);
    expect(home).not.toContain(`data-operation="${good.operationId}"`);
    const accepted = await (await fetch(`${base}/ui?state=ACCEPTED`)).text();
    expect(accepted).toContain(`data-operation="${good.operationId}"`);

    const detail = await (await fetch(`${base}/ui/operations/${good.operationId}`)).text();
    expect(detail).toContain('<dd data-field="state">ACCEPTED</dd>');
    expect(detail).toContain('SUBMITTING → WORKING');
    expect(detail).toContain(receipt.id);
    const inDoubt = await (await fetch(`${base}/ui/operations/${doubt.operationId}`)).text();
    expect(inDoubt).toContain('data-field="evidence"');
    expect(inDoubt).toContain('submit_lost');
    expect(inDoubt).toContain('No receipt yet.');
    expect((await fetch(`${base}/ui/operations/nope`)).status).toBe(404);
  }, 60_000);

  it('opens the ledger every other ops command uses when --ledger is not given', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'terminus-ui-default-'));
    cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'state', 'terminus', 'ledger.db');
    // A ledger where `terminus call` and `terminus ops` look for it: under $XDG_STATE_HOME.
    mkdirSync(dirname(path), { recursive: true });
    const ledger = openSqliteLedger({ path });
    await ledger.close();
    const child: ChildProcess = spawn(process.execPath, [CLI, 'ops', 'ui', '--port', '0'], {
      cwd: dir,
      env: { ...process.env, TERMINUS_LEDGER: '', XDG_STATE_HOME: join(dir, 'state') },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanup.push(() => child.kill('SIGKILL'));
    const line = await new Promise<string>((resolveLine, reject) => {
      let out = '';
      child.stdout!.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('\n')) resolveLine(out);
      });
      child.once('exit', (code) => reject(new Error(`ops ui exited ${code}`)));
    });
    expect(line).toContain(`(ledger ${path})`);
  }, 30_000);
});
