/**
 * A full disk under the SQLite store (issue 12 item 11): a write that cannot be committed is the
 * retryable `unavailable` (503 + Retry-After at the HTTP edge, -32050 on JSON-RPC), never
 * `internal`; nothing half-written is visible, and once space is back the same store takes writes
 * again without a restart. A real SQLite file on a real 1 MiB tmpfs (mounting needs root, as CI is).
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { isTerminusError } from '../../src/core/errors.js';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import type { TaskStore } from '../../src/store/port.js';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';

const ROOT = process.getuid?.() === 0;

const pad = defineTaskTool({
  name: 'pad',
  description: 'returns at once',
  inputSchema: z.object({ pad: z.string() }),
  handler: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
});

describe.skipIf(!ROOT)('SQLite store on a full disk (skipped unless root: it mounts a tmpfs)', () => {
  let dir: string;
  let store: TaskStore;
  let engine: TaskEngine;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'terminus-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
    store = await openSqliteTaskStore({ path: join(dir, 'tasks.db') });
    // Not started: only submits are written, so the test controls every write.
    engine = createEngine({ store, tools: [pad], clock: systemClock, ids: systemIds });
  });
  afterAll(async () => {
    await engine?.stop();
    await store?.close();
    execFileSync('umount', [dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a create that cannot be committed is retryable unavailable; after space is freed it succeeds', async () => {
    const before = await engine.submit({ owner: 'o', tool: 'pad', args: { pad: 'a' }, wire: 'mcp-tasks-ext' });
    const filler = join(dir, 'filler');
    try {
      writeFileSync(filler, Buffer.alloc(2 * 1024 * 1024));
    } catch (error) {
      expect((error as NodeJS.ErrnoException).code).toBe('ENOSPC'); // the disk is now full
    }
    const refused = await engine
      .submit({ owner: 'o', tool: 'pad', args: { pad: 'x'.repeat(200_000) }, wire: 'mcp-tasks-ext' })
      .then(
        () => undefined,
        (error: unknown) => error,
      );
    expect(isTerminusError(refused, 'unavailable'), String(refused)).toBe(true);
    expect((refused as { retryable: boolean }).retryable).toBe(true);
    rmSync(filler);
    const after = await engine.submit({
      owner: 'o',
      tool: 'pad',
      args: { pad: 'x'.repeat(200_000) },
      wire: 'mcp-tasks-ext',
    });
    expect(after.created).toBe(true);
    expect((await engine.list('o', { limit: 10 })).tasks.map((t) => t.id).sort()).toEqual(
      [before.task.id, after.task.id].sort(),
    );
  });
});
