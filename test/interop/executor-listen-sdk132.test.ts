/**
 * Our executor listening against a peer: `@modelcontextprotocol/sdk` 1.32 with its experimental
 * tasks and `InMemoryTaskStore`, sessionful Streamable HTTP on 127.0.0.1:0 (bench/baselines/
 * sdk132-server.ts, the benchmarks' B0), whose `storeTaskResult` pushes `notifications/tasks/status`.
 * The executor negotiates the 2025-11-25 wire and opens the session's GET stream (one for the
 * connection); the peer suggests a 30 s poll interval, so a receipt within the test's budget came
 * from a push that brought the read forward.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import type { ClientWire } from '../../src/executor/wire-port.js';
import { ROOT, tsNode } from '../cli/helpers.js';

let url = '';
let child: ChildProcess | undefined;
beforeAll(async () => {
  const started = spawn(
    process.execPath,
    tsNode(join(ROOT, 'bench/baselines/sdk132-server.ts'), '--transport', 'http', '--poll-ms', '30000'),
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  child = started;
  url = await new Promise<string>((resolve, reject) => {
    let out = '';
    started.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const match = /^listening (\S+)/m.exec(out);
      if (match !== null) resolve(match[1]!);
    });
    started.on('exit', (code) => reject(new Error(`sdk132 server exited ${code}`)));
  });
}, 60_000);
afterAll(async () => {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child!.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
});

describe('SDK 1.32 task server (B0) over HTTP', () => {
  test('reference 1.11: one GET stream; the pushed completions are read and receipted', async () => {
    let gets = 0;
    const counting: typeof fetch = (input, init) => {
      if (init?.method === 'GET') gets++;
      return fetch(input, init);
    };
    const hints: { taskId: string; status: string }[] = [];
    const wires: ClientWire[] = [];
    const executor = await createExecutor({
      ledger: createMemoryLedger(),
      connect: async () => {
        const wire = await connectServer({ url, fetch: counting }, { clock: systemClock, wire: 'auto' });
        wire.onStatusHint?.((taskId, status) => hints.push({ taskId, status }));
        wires.push(wire);
        return wire;
      },
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      qps: 200,
    });
    try {
      const handles = await Promise.all(
        [0, 1, 2].map((i) =>
          executor.submit({ callNodeId: `b0-${i}`, server: 'b0', tool: 'bench_sleep', args: { ms: 200 + 100 * i } }),
        ),
      );
      const receipts = await Promise.all(handles.map((h) => h.result()));
      expect(wires[0]?.wire).toBe('mcp-2025-11-25');
      expect(receipts.map((r) => r.status)).toEqual(['completed', 'completed', 'completed']);
      for (const r of receipts) expect(hints).toContainEqual({ taskId: r.taskId, status: 'completed' });
      expect(gets).toBe(1);
    } finally {
      await executor.close();
    }
  }, 25_000);
});
