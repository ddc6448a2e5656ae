import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { afterAll, beforeAll, describe, expect, test } from 'vitest';
import type { WireName } from '../../src/core/task.js';
import { parseWireName } from '../../src/server/wire/registry.js';
import { SEP1391_CAPABILITY } from '../../src/server/wire/sep-1391/index.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskStore } from '../../src/store/port.js';
import { rpc } from '../server/helpers.js';
import { ALICE, LegacySession, aip, eventually, startWireServer, type Json, type WireServer } from './helpers.js';

/**
 * Seed 002 / issue 4: `--disable-wire W` refuses NEW submissions on W with a clear error, while
 * status, result, cancel and list keep working for the tasks created under W (before the restart
 * that disabled it). One store outlives the servers, as a database outlives `terminus serve`.
 */
const ASYNC = { experimental: { [SEP1391_CAPABILITY]: {} } };

interface Probe {
  /** Submits `args` on the wire; resolves with the task id, or the wire's error JSON. */
  submit(url: string, base: string, args: Record<string, unknown>): Promise<{ id?: string; error?: Json }>;
  status(url: string, base: string, id: string): Promise<string>;
  result(url: string, base: string, id: string): Promise<Json>;
  cancel(url: string, base: string, id: string): Promise<void>;
  list?(url: string, base: string): Promise<string[]>;
}

const session = (url: string, caps: Record<string, unknown> = {}) => LegacySession.open(url, ALICE, caps);

const PROBES: Record<WireName, Probe> = {
  'mcp-tasks-ext': {
    submit: async (url, _b, args) => {
      const a = await rpc(url, 'tools/call', { name: 'work', arguments: args }, { token: ALICE });
      return a.error === undefined ? { id: a.result.taskId as string } : { error: a.error };
    },
    status: async (url, _b, id) =>
      (await rpc(url, 'tasks/get', { taskId: id }, { token: ALICE })).result.status as string,
    result: async (url, _b, id) =>
      (await rpc(url, 'tasks/get', { taskId: id }, { token: ALICE })).result.result.content,
    cancel: async (url, _b, id) => void (await rpc(url, 'tasks/cancel', { taskId: id }, { token: ALICE })),
  },
  'mcp-2025-11-25': {
    submit: async (url, _b, args) => {
      const a = await (await session(url)).request('tools/call', { name: 'work', arguments: args, task: {} });
      return a.error === undefined ? { id: a.result.task.taskId as string } : { error: a.error };
    },
    status: async (url, _b, id) =>
      (await (await session(url)).request('tasks/get', { taskId: id })).result.status as string,
    result: async (url, _b, id) => (await (await session(url)).request('tasks/result', { taskId: id })).result.content,
    cancel: async (url, _b, id) => {
      const a = await (await session(url)).request('tasks/cancel', { taskId: id });
      expect(a.result?.status).toBe('cancelled');
    },
    list: async (url) =>
      ((await (await session(url)).request('tasks/list', {})).result.tasks as { taskId: string }[]).map(
        (t) => t.taskId,
      ),
  },
  'sep-1391': {
    submit: async (url, _b, args) => {
      const a = await (
        await session(url, ASYNC)
      ).request('tools/call', { name: 'work', arguments: args, operation: {} });
      return a.error === undefined ? { id: a.result.operation.token as string } : { error: a.error };
    },
    status: async (url, _b, id) =>
      (await (await session(url, ASYNC)).request('tools/async/status', { token: id })).result.status as string,
    result: async (url, _b, id) =>
      (await (await session(url, ASYNC)).request('tools/async/result', { token: id })).result.result.content,
    cancel: async (url, _b, id) => {
      const a = await (await session(url, ASYNC)).request('tools/async/cancel', { token: id });
      expect(a.result?.status).toBe('canceled');
    },
  },
  'aip-151': {
    submit: async (_u, base, args) => {
      const a = await aip(base, 'POST', '/v1/tools/work:run', ALICE, { arguments: args });
      return a.status === 200 ? { id: (a.body.name as string).slice('operations/'.length) } : { error: a };
    },
    status: async (_u, base, id) => {
      const op = (await aip(base, 'GET', `/v1/operations/${id}`, ALICE)).body;
      return op.done ? (op.error?.code === 1 ? 'cancelled' : 'completed') : (op.metadata.status as string);
    },
    result: async (_u, base, id) => (await aip(base, 'GET', `/v1/operations/${id}`, ALICE)).body.response.content,
    cancel: async (_u, base, id) => {
      expect((await aip(base, 'POST', `/v1/operations/${id}:cancel`, ALICE)).status).toBe(200);
    },
    list: async (_u, base) =>
      ((await aip(base, 'GET', '/v1/operations?page_size=1000', ALICE)).body.operations as { name: string }[]).map(
        (o) => o.name.slice('operations/'.length),
      ),
  },
};

const WIRES = Object.keys(PROBES) as WireName[];
let store: TaskStore;
const created = new Map<WireName, { done: string; working: string }>();

beforeAll(async () => {
  store = createMemoryTaskStore();
  const before: WireServer = await startWireServer({ store });
  for (const wire of WIRES) {
    const probe = PROBES[wire];
    const done = (await probe.submit(before.url, before.base, { text: wire })).id as string;
    const working = (await probe.submit(before.url, before.base, { mode: 'block', key: `dis-${wire}` })).id as string;
    await eventually(
      () => probe.status(before.url, before.base, done),
      (s) => s === 'completed',
    );
    created.set(wire, { done, working });
  }
  await before.close(); // the blocked tasks are released, still working, and re-run after the restart
});
afterAll(async () => {
  await store.close();
});

describe('--disable-wire', () => {
  test.each(WIRES)(
    '%s disabled: new submissions refused, its existing tasks still read, cancelled, listed',
    async (wire) => {
      const server = await startWireServer({ store, disabled: [wire] });
      try {
        const probe = PROBES[wire];
        const refused = await probe.submit(server.url, server.base, { text: 'new' });
        expect(refused.id).toBeUndefined();
        const text = JSON.stringify(refused.error);
        expect(text).toMatch(/disabled for new submissions/);
        if (wire === 'aip-151') {
          expect(refused.error.status).toBe(400);
          expect(refused.error.body.error.status).toBe('FAILED_PRECONDITION');
          expect(refused.error.body.error.details[0].reason).toBe('WIRE_DISABLED');
        } else {
          expect(refused.error.code).toBe(-32600);
          expect(refused.error.data.reason).toBe('wire_disabled');
        }
        const { done, working } = created.get(wire) as { done: string; working: string };
        expect(await probe.status(server.url, server.base, done)).toBe('completed');
        expect(await probe.result(server.url, server.base, done)).toEqual([{ type: 'text', text: `done ${wire}` }]);
        if (probe.list !== undefined) expect(await probe.list(server.url, server.base)).toContain(working);
        await probe.cancel(server.url, server.base, working);
        server.gates.release(`dis-${wire}`);
        expect((await store.get('auth:alice', working, Date.now()))?.status).toBe('cancelled');
        // Every other wire still takes submissions.
        const other = WIRES.find((w) => w !== wire) as WireName;
        expect((await PROBES[other].submit(server.url, server.base, { text: 'elsewhere' })).id).toBeDefined();
      } finally {
        await server.close();
      }
    },
  );

  test('parseWireName names the valid wires on a typo', () => {
    expect(parseWireName('sep-1391')).toBe('sep-1391');
    expect(() => parseWireName('sep1391')).toThrow(/one of: mcp-tasks-ext, mcp-2025-11-25, sep-1391, aip-151/);
  });
});

describe('terminus serve --disable-wire (the CLI)', () => {
  const root = new URL('../..', import.meta.url).pathname;
  let dir: string;
  const children: ChildProcess[] = [];
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'terminus-wires-'));
  });
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  function start(args: string[]): {
    child: ChildProcess;
    firstLine: Promise<string>;
    exit: Promise<number | null>;
    stderr: () => string;
  } {
    const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'serve', '--port', '0', ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    const stderr: Buffer[] = [];
    child.stderr?.on('data', (c: Buffer) => stderr.push(c));
    const exit = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    const firstLine = new Promise<string>((resolve, reject) => {
      createInterface({ input: child.stdout as NodeJS.ReadableStream }).once('line', resolve);
      void exit.then((code) => reject(new Error(`exited ${code}: ${Buffer.concat(stderr).toString()}`)));
    });
    firstLine.catch(() => undefined); // awaited by the tests that expect a listening line
    return { child, firstLine, exit, stderr: () => Buffer.concat(stderr).toString() };
  }

  test('refuses AIP submissions with FAILED_PRECONDITION while the Operations routes answer', async () => {
    const { child, firstLine, exit } = start(['--db', join(dir, 'cli.db'), '--disable-wire', 'aip-151']);
    const line = await firstLine;
    const url = /^terminus listening on (\S+)/.exec(line)?.[1] as string;
    const base = url.replace(/\/mcp$/, '');
    const refused = await aip(base, 'POST', '/v1/tools/build_report:run', undefined, { arguments: {} });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details[0].reason).toBe('WIRE_DISABLED');
    expect((await aip(base, 'GET', '/v1/operations', undefined)).status).toBe(200);
    child.kill('SIGTERM');
    await exit;
  }, 60_000);

  test('an unknown wire name is a usage error naming the valid ones', async () => {
    const { exit, stderr } = start(['--db', join(dir, 'bad.db'), '--disable-wire', 'grpc']);
    expect(await exit).not.toBe(0);
    expect(stderr()).toMatch(/unknown wire "grpc"/);
  }, 60_000);
});
