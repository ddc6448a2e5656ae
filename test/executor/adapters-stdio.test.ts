/**
 * The stdio channel: `terminus serve --stdio` spawned as a child process (run from source with tsx),
 * negotiated as the Tasks extension, and driven by the executor to a receipt.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'terminus-stdio-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const serve = () => ({
  command: process.execPath,
  args: [
    '--import',
    'tsx',
    'src/cli/main.ts',
    'serve',
    '--stdio',
    '--fixtures',
    'conformance',
    '--db',
    join(dir, 'tasks.db'),
  ],
  stderr: 'ignore' as const,
});

describe('stdio channel', () => {
  it('negotiates the Tasks extension with a spawned terminus serve --stdio and completes a call', async () => {
    const ledger = createMemoryLedger();
    const executor = await createExecutor({
      ledger,
      connect: () => connectServer(serve(), { clock: systemClock, timeoutMs: 60_000 }),
      clock: systemClock,
      random: systemRandom,
      ids: systemIds,
      policy: { minPollIntervalMs: 50 },
    });
    try {
      const op = await executor.submit({
        callNodeId: 'stdio-1',
        server: 'stdio',
        tool: 'slow_compute',
        args: { seconds: 0.2 },
      });
      const receipt = await op.result();
      expect(receipt.status).toBe('completed');
      expect(receipt.payload).toMatchObject({ content: [{ text: 'slow_compute: done after 0.2 s' }] });
      expect((await ledger.loadByCallNode('stdio-1'))?.wire.name).toBe('mcp-tasks-ext');
    } finally {
      await executor.close();
    }
  }, 90_000);

  it('a closed connection fails requests as lost', async () => {
    const wire = await connectServer(serve(), { clock: systemClock, timeoutMs: 60_000 });
    const answer = await wire.submit({ tool: 'slow_compute', args: { seconds: 30 }, submissionKey: 'stdio-key-1' });
    expect(answer.kind).toBe('task');
    await wire.close();
    await expect(wire.getStatus(answer.kind === 'task' ? answer.taskId : 'x')).rejects.toMatchObject({ kind: 'lost' });
  }, 90_000);
});
