import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock, systemIds } from '../../src/core/system.js';
import { isTerminusError } from '../../src/core/errors.js';
import { createEngine } from '../../src/runner/engine.js';
import { demoTools } from '../../src/tools/demo/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';

/** Issue 12 item 7: `analyze_csv {path}` reads only below its data folder, through the real engine. */
let root: string;
let dataDir: string;
const store = createMemoryTaskStore();
let engine: ReturnType<typeof createEngine>;

beforeAll(() => {
  root = mkdtempSync(join(tmpdir(), 'terminus-paths-'));
  dataDir = join(root, 'data');
  mkdirSync(join(dataDir, 'sub'), { recursive: true });
  writeFileSync(join(dataDir, 'sub', 'ok.csv'), 'a,b\n1,2\n3,4\n');
  writeFileSync(join(root, 'secret.csv'), 'password,hash\nroot,x\n');
  symlinkSync(join(root, 'secret.csv'), join(dataDir, 'link-out.csv'));
  symlinkSync('/etc/passwd', join(dataDir, 'passwd.csv'));
  symlinkSync(join(dataDir, 'sub', 'ok.csv'), join(dataDir, 'link-in.csv'));
  engine = createEngine({
    store,
    tools: demoTools({ dataDir }),
    clock: systemClock,
    ids: systemIds,
    claimIntervalMs: 20,
  });
  engine.start();
});
afterAll(async () => {
  await engine.stop();
  await store.close();
  rmSync(root, { recursive: true, force: true });
});

async function run(path: string) {
  const { task } = await engine.submit({ owner: 'auth:t', tool: 'analyze_csv', args: { path }, wire: 'mcp-tasks-ext' });
  let t = task;
  while (t.status === 'working')
    t = await engine.waitForChange('auth:t', t.id, { sinceUpdatedAt: t.updatedAt, timeoutMs: 5000 });
  return t;
}

describe('analyze_csv confines paths to its data folder', () => {
  it.each(['/etc/passwd', '../secret.csv', 'sub/../../secret.csv', 'sub\\..\\..\\secret.csv', 'C:/x.csv'])(
    'refuses %s before anything is stored (invalid_argument)',
    async (path) => {
      const before = (await engine.list('auth:t', { limit: 100 })).tasks.length;
      const error = await engine
        .submit({ owner: 'auth:t', tool: 'analyze_csv', args: { path }, wire: 'mcp-tasks-ext' })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(isTerminusError(error, 'invalid_argument')).toBe(true);
      expect((await engine.list('auth:t', { limit: 100 })).tasks.length).toBe(before);
    },
  );

  it.each(['link-out.csv', 'passwd.csv'])(
    'a symlink %s pointing out fails the task without reading it',
    async (path) => {
      const task = await run(path);
      expect(task.status).toBe('failed');
      expect(task.error?.code).toBe(-32602);
      expect(task.error?.data).toMatchObject({ reason: 'path_outside_data_folder' });
      expect(JSON.stringify(task)).not.toContain('root');
    },
  );

  it('reads a relative path and a symlink that stays inside', async () => {
    for (const path of ['sub/ok.csv', 'link-in.csv']) {
      const task = await run(path);
      expect(task.status).toBe('completed');
      expect(task.result?.structuredContent).toMatchObject({ rows: 2 });
    }
  });

  it('a missing file is a clear tool error, not an internal one', async () => {
    const task = await run('nope.csv');
    expect(task.status).toBe('failed');
    expect(task.error).toMatchObject({ code: -32602, data: { reason: 'file_not_found' } });
  });
});
