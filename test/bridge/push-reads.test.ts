/**
 * What the native front's status pushes cost the ledger: a watched task is re-read only on a change
 * that can concern it. Plain-tool calls (a synchronous upstream tool: no upstream task, ever) held
 * open and watched over `subscriptions/listen` are not re-read when another operation's upstream
 * task reports snapshots; they are re-read when they end (and pushed `completed`).
 *
 * Real components: `terminus serve --fixtures conformance` (upstream `reports`, a task tool) and a
 * plain SDK 2.4 server over stdio (upstream `plain`, no task wire), an in-process bridge on HTTP
 * 127.0.0.1:0 over a real SQLite ledger wrapped in a decorator that counts `load`s per operation.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createBridge, type Bridge } from '../../src/bridge/index.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { openSqliteLedger } from '../../src/sqlite.js';
import { postListen, rpc, sseMessages } from '../server/helpers.js';
import { killAll, ROOT, startServe, tempDir, tsNode, type Served } from '../cli/helpers.js';

const SLOW = 180_000;
const PLAIN = join(ROOT, 'test/bridge/fixtures/plain-server.ts');
const dir = tempDir('terminus-bridge-push-reads-');

/** The ledger, with every `load` counted per operation id. */
function countingLedger(inner: Ledger): { ledger: Ledger; loads: Map<string, number> } {
  const loads = new Map<string, number>();
  const ledger = new Proxy(inner, {
    get(target, key, receiver) {
      const value: unknown = Reflect.get(target, key, receiver);
      if (key === 'load') {
        return (id: string) => {
          loads.set(id, (loads.get(id) ?? 0) + 1);
          return target.load(id);
        };
      }
      return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return { ledger, loads };
}

interface Frame {
  method?: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
  params?: any;
}

/** A listen stream on `taskIds`: its frames as they come, and its close. */
async function listen(url: string, taskIds: string[]): Promise<{ frames: Frame[]; close(): void }> {
  const controller = new AbortController();
  const response = await postListen(url, taskIds, { id: 'sub-reads', signal: controller.signal });
  const frames: Frame[] = [];
  void (async () => {
    try {
      for await (const frame of sseMessages<Frame>(response.body!)) frames.push(frame);
    } catch {
      // Closed.
    }
  })();
  return { frames, close: () => controller.abort() };
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

async function until(done: () => boolean, ms = 60_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (Date.now() > deadline) throw new Error('timed out waiting');
    await sleep(50);
  }
}

const statusesOf = (frames: Frame[], taskId: string): string[] =>
  frames
    .filter((f) => f.method === 'notifications/tasks' && f.params.taskId === taskId)
    .map((f) => f.params.status as string);

let served: Served;
let bridge: Bridge;
let url: string;
let counted: ReturnType<typeof countingLedger>;
const sqlite = openSqliteLedger({ path: join(dir.path, 'bridge.db') });

beforeAll(async () => {
  served = await startServe(dir.path, ['--fixtures', 'conformance']);
  counted = countingLedger(sqlite);
  bridge = await createBridge({
    ledger: counted.ledger,
    upstreams: {
      reports: { url: served.url },
      plain: { command: process.execPath, args: tsNode(PLAIN), cwd: ROOT },
    },
    inlineWaitMs: 1_000,
  });
  url = (await bridge.serveHttp({ port: 0 })).url;
}, SLOW);
afterAll(async () => {
  await bridge?.close();
  await sqlite.close();
  await served?.stop();
  killAll();
  dir.remove();
});

describe('bridge front pushes: ledger reads', () => {
  it(
    "watched plain-tool calls are not re-read for another operation's upstream snapshots, only when they end",
    async () => {
      const PLAIN_CALLS = 4;
      const plainIds: string[] = [];
      for (let i = 0; i < PLAIN_CALLS; i++) {
        const created = await rpc(url, 'tools/call', {
          name: 'plain__slow_sum',
          arguments: { a: i, b: 1, ms: 20_000 },
        });
        expect(created.result?.resultType).toBe('task');
        plainIds.push(created.result!.taskId as string);
      }
      const stream = await listen(url, plainIds);
      await until(() => plainIds.every((id) => statusesOf(stream.frames, id).includes('working')));
      // The watches' first reads are done: from here on, count.
      await sleep(300);
      const before = plainIds.map((id) => counted.loads.get(id) ?? 0);

      // Other operations' upstream tasks, one after the other: their snapshots (created, progress,
      // completed) arrive while the plain calls stay open upstream.
      for (const label of ['push-reads-1', 'push-reads-2']) {
        const other = await rpc(url, 'tools/call', { name: 'reports__slow_compute', arguments: { seconds: 1, label } });
        const otherId = other.result!.taskId as string;
        const otherStream = await listen(url, [otherId]);
        await until(() => statusesOf(otherStream.frames, otherId).includes('completed'));
        otherStream.close();
      }
      const during = plainIds.map((id, i) => (counted.loads.get(id) ?? 0) - before[i]!);
      // The plain calls were open all along (else their end, not a snapshot, read them).
      expect(plainIds.flatMap((id) => statusesOf(stream.frames, id)).filter((s) => s !== 'working')).toEqual([]);
      // Nothing about the plain calls changed. A watch whose first read came before the plain call
      // was recorded as sent plainly learns it on the next snapshot: one read at most, whatever the
      // number of snapshots.
      expect(during.filter((reads) => reads > 1)).toEqual([]);

      // Their end is still pushed (the operation's end re-reads it).
      await until(() => plainIds.every((id) => statusesOf(stream.frames, id).includes('completed')));
      stream.close();
    },
    SLOW,
  );
});
