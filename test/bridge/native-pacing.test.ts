/**
 * How the bridge's native tasks are paced and kept, in front of `terminus serve --fixtures
 * conformance`:
 * - the poll interval a task suggests adapts to its tool's observed durations (issue 32 item 4):
 *   the executor's own floor for a tool not seen yet, longer once the tool's calls are known to be
 *   long, never above `--max-poll-interval`;
 * - a 2025-11-25 host's `task.ttl` is granted (capped by `--max-task-ttl`) and reported; past it the
 *   front forgets the task id (-32602), while the ledger keeps the operation for `terminus_wait`.
 */
import { Client as Client132 } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { stdioBridge132, useServeAndBridge } from './helpers.js';
import { rpc } from '../server/helpers.js';

const SLOW = 180_000;
const front = useServeAndBridge('terminus-bridge-pacing-', 'pace.db', ['--max-poll-interval', '0.6']);

async function untilDone(taskId: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const got = await rpc(front.url, 'tasks/get', { taskId });
    if (got.result?.status === 'completed') return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${taskId} did not complete`);
}

describe('bridge native tasks: the poll interval adapts to the tool', () => {
  it(
    'X-12 C6 a tool not seen yet suggests the executor floor (250 ms); once its calls took 3 s, its next task suggests more, up to the cap',
    async () => {
      const first = await rpc(front.url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 3, label: 'pace-1' },
      });
      expect(first.result.pollIntervalMs).toBe(250);
      await untilDone(first.result.taskId as string);
      // The same tool again: its calls are known to take ~3 s, so a quarter of that, capped at 0.6 s.
      const second = await rpc(front.url, 'tools/call', {
        name: 'slow_compute',
        arguments: { seconds: 3, label: 'pace-2' },
      });
      expect(second.result.pollIntervalMs).toBe(600);
      // Another tool, never seen: the floor again.
      const other = await rpc(front.url, 'tools/call', { name: 'failing_job', arguments: {} });
      expect(other.result.pollIntervalMs).toBe(250);
      await untilDone(second.result.taskId as string);
    },
    SLOW,
  );
});

describe("bridge native tasks: a 2025-11-25 host's task.ttl", () => {
  it(
    'T-34 T-35 T-36 T-80 the granted ttl is reported (capped); past it tasks/get is -32602 and the ledger still answers terminus_wait',
    async () => {
      const client = new Client132({ name: 'sdk-1.32-host', version: '1.0.0' }, { capabilities: { tasks: {} } });
      await client.connect(stdioBridge132(front, 'ttl.db', ['--max-task-ttl', '3']));
      try {
        const create = async (label: string, task: Record<string, unknown>) =>
          (
            await client.request(
              { method: 'tools/call', params: { name: 'slow_compute', arguments: { seconds: 1, label }, task } },
              CreateTaskResultSchema,
            )
          ).task;
        const short = await create('ttl-short', { ttl: 1500 });
        expect(short.ttl).toBe(1500);
        expect((await create('ttl-long', { ttl: 10_000_000 })).ttl).toBe(3000);
        expect((await create('ttl-none', {})).ttl).toBeNull();
        expect((await client.experimental.tasks.getTask(short.taskId)).ttl).toBe(1500);
        await new Promise((r) => setTimeout(r, 1800));
        const gone = await client.experimental.tasks.getTask(short.taskId).then(
          () => null,
          (e: unknown) => e,
        );
        expect(gone).toBeInstanceOf(McpError);
        expect((gone as McpError).code).toBe(-32602);
        const { tasks } = await client.experimental.tasks.listTasks();
        expect(tasks.map((t) => t.taskId)).not.toContain(short.taskId);
        // The operation and its receipt stay in the ledger: the model's tools still answer for it.
        const waited = await client.request(
          { method: 'tools/call', params: { name: 'terminus_wait', arguments: { operation: short.taskId } } },
          CallToolResultSchema,
        );
        expect(waited.isError).toBeFalsy();
        expect(JSON.stringify(waited.content)).toContain('ttl-short: done after 1 s');
      } finally {
        await client.close();
      }
    },
    SLOW,
  );
});
