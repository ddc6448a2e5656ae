import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXT, PROTOCOL } from './helpers.js';

// Issue 14 item 1 on stdio: the task methods of both eras answered ahead of the SDK's dispatch
// must write exactly the bytes the SDK writes. Four `terminus serve --stdio` children (the built
// CLI) share ONE SQLite file, so a task created through one is the same task (owner `stdio`) for
// all: for each era one child with the fast path and one with `--no-fast-path`. Each request
// line goes to both children of its era and the answer lines are compared byte for byte. Every
// child is preloaded with test/fixtures/count-sdk-dispatch.ts, which writes a stderr line per
// request the SDK dispatches, so each case also says which path must have answered it.

const root = new URL('../..', import.meta.url).pathname;
const BUILT = join(root, 'dist/cli/main.js');
const PRELOAD = join(root, 'test/fixtures/count-sdk-dispatch.ts');
const LEGACY = '2025-11-25';

class Child {
  readonly #proc: ChildProcessWithoutNullStreams;
  #out = '';
  #err = '';
  readonly #waiters = new Set<() => void>();

  constructor(db: string, fast: boolean) {
    this.#proc = spawn(
      process.execPath,
      [
        '--import',
        'tsx',
        '--import',
        PRELOAD,
        BUILT,
        'serve',
        '--stdio',
        '--db',
        db,
        '--fixtures',
        'conformance',
        // Two processes answer for one database: the interval adapted to each node's own run times
        // (and to the instant) would differ between them, so both suggest each tool's own.
        '--max-poll-interval-ms',
        '0',
        ...(fast ? [] : ['--no-fast-path']),
      ],
      { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.#proc.stdout.setEncoding('utf8').on('data', (chunk: string) => this.#grow(() => (this.#out += chunk)));
    this.#proc.stderr.setEncoding('utf8').on('data', (chunk: string) => this.#grow(() => (this.#err += chunk)));
  }

  #grow(append: () => void): void {
    append();
    for (const wake of [...this.#waiters]) wake();
  }

  async #until<T>(probe: () => T | undefined, what: string): Promise<T> {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const found = probe();
      if (found !== undefined) return found;
      if (Date.now() > deadline || this.#proc.exitCode !== null) {
        throw new Error(`stdio child: no ${what} (exit ${this.#proc.exitCode}); stderr: ${this.#err}`);
      }
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          this.#waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 200);
        this.#waiters.add(wake);
      });
    }
  }

  /** Writes one line; returns the answer line (raw bytes as text) whose id is `id`. */
  async request(line: string, id: unknown): Promise<string> {
    this.write(line);
    return this.#until(() => this.takeLine(id), `answer to id ${JSON.stringify(id)}`);
  }

  write(line: string): void {
    this.#proc.stdin.write(`${line}\n`);
  }

  /** Removes and returns the first answer line with this id (server requests and notifications are skipped). */
  takeLine(id: unknown): string | undefined {
    const lines = this.#out.split('\n');
    const index = lines.findIndex((l, i) => {
      if (i === lines.length - 1 || l.length === 0) return false;
      const m = JSON.parse(l) as { id?: unknown; method?: unknown };
      return m.method === undefined && JSON.stringify(m.id) === JSON.stringify(id);
    });
    if (index < 0) return undefined;
    const [line] = lines.splice(index, 1);
    this.#out = lines.join('\n');
    return line;
  }

  /** The SDK dispatches recorded so far (`sdk-dispatch <method> <id>` lines). */
  dispatches(): string[] {
    return this.#err.split('\n').filter((l) => l.startsWith('sdk-dispatch '));
  }

  /** Waits for the dispatch line of a later request (the stderr pipe keeps order). */
  async sawDispatch(entry: string): Promise<void> {
    await this.#until(() => (this.dispatches().includes(entry) ? true : undefined), `dispatch "${entry}"`);
  }

  async close(): Promise<void> {
    if (this.#proc.exitCode !== null) return;
    const exited = new Promise((resolve) => this.#proc.once('exit', resolve));
    this.#proc.stdin.end();
    const timer = setTimeout(() => this.#proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  }
}

interface Pair {
  readonly fast: Child;
  readonly slow: Child;
  readonly era: 'modern' | 'legacy';
}

let dir: string;
let modern: Pair;
let legacy: Pair;
let seq = 1000;

const envelope = (declare = true): Record<string, unknown> => ({
  'io.modelcontextprotocol/protocolVersion': PROTOCOL,
  'io.modelcontextprotocol/clientInfo': { name: 'stdio-fast-test', version: '1.0.0' },
  'io.modelcontextprotocol/clientCapabilities': declare ? { extensions: { [EXT]: {} } } : {},
});

function line(method: string, params: unknown, id: unknown = (seq += 1)): { text: string; id: unknown } {
  const body: Record<string, unknown> = { jsonrpc: '2.0', id, method };
  if (params !== undefined) body.params = params;
  return { text: JSON.stringify(body), id };
}

/** A 2026-07-28 request: the envelope in `params._meta`. */
function modernLine(
  method: string,
  params: Record<string, unknown>,
  options: { declare?: boolean; id?: unknown } = {},
) {
  const { _meta, ...rest } = params as { _meta?: Record<string, unknown> };
  return line(
    method,
    { ...rest, _meta: { ...envelope(options.declare), ..._meta } },
    'id' in options ? options.id : (seq += 1),
  );
}

type Expect = 'fast' | 'sdk';

/** Sends one line to both children of the era; the answers must be the same bytes. */
async function same(pair: Pair, request: { text: string; id: unknown }, expected: Expect): Promise<string> {
  const before = pair.fast.dispatches().length;
  const [onFast, onSlow] = [
    await pair.fast.request(request.text, request.id),
    await pair.slow.request(request.text, request.id),
  ];
  expect(onFast).toBe(onSlow);
  // A ping after it: once its dispatch line is in, every earlier dispatch line is too.
  const ping = line('ping', undefined);
  await pair.fast.request(ping.text, ping.id);
  await pair.fast.sawDispatch(`sdk-dispatch ping ${JSON.stringify(ping.id)}`);
  const between = pair.fast.dispatches().slice(before, -1);
  if (expected === 'fast') expect(between, `fast path must answer ${request.text}`).toEqual([]);
  else expect(between, `the SDK must answer ${request.text}`).toHaveLength(1);
  return onFast;
}

async function result(child: Child, request: { text: string; id: unknown }): Promise<Record<string, unknown>> {
  const answer = JSON.parse(await child.request(request.text, request.id)) as { result?: Record<string, unknown> };
  if (answer.result === undefined) throw new Error(`no result for ${request.text}`);
  return answer.result;
}

async function waitStatus(pair: Pair, taskId: string, status: string): Promise<void> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const got =
      pair.era === 'modern'
        ? await result(pair.slow, modernLine('tasks/get', { taskId }))
        : await result(pair.slow, line('tasks/get', { taskId }));
    if (got.status === status) return;
    if (Date.now() > deadline) throw new Error(`task ${taskId} never ${status}: ${JSON.stringify(got)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function modernTask(tool: string, args: Record<string, unknown>): Promise<string> {
  const got = await result(modern.slow, modernLine('tools/call', { name: tool, arguments: args }));
  if (got.resultType !== 'task') throw new Error(`no task: ${JSON.stringify(got)}`);
  return got.taskId as string;
}

async function legacyTask(tool: string, args: Record<string, unknown>): Promise<string> {
  const got = await result(legacy.slow, line('tools/call', { name: tool, arguments: args, task: { ttl: 600_000 } }));
  return (got.task as { taskId: string }).taskId;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'terminus-stdio-fast-'));
  const db = join(dir, 'shared.db');
  // One child first, so the schema is created once; then the others on the same file.
  const first = new Child(db, false);
  const open = modernLine('tools/list', {});
  await first.request(open.text, open.id);
  const others = [new Child(db, true), new Child(db, true), new Child(db, false)] as const;
  modern = { fast: others[0], slow: first, era: 'modern' };
  legacy = { fast: others[1], slow: others[2], era: 'legacy' };
  const opened = modernLine('tools/list', {});
  await modern.fast.request(opened.text, opened.id);
  for (const child of [legacy.fast, legacy.slow]) {
    const init = line('initialize', {
      protocolVersion: LEGACY,
      capabilities: {},
      clientInfo: { name: 'stdio-fast-test', version: '1' },
    });
    await child.request(init.text, init.id);
    child.write(JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }));
  }
}, 120_000);

afterAll(async () => {
  await Promise.all([modern, legacy].flatMap((p) => (p === undefined ? [] : [p.fast.close(), p.slow.close()])));
  rmSync(dir, { recursive: true, force: true });
});

describe('stdio, 2026-07-28 connection: task methods fast = SDK, byte for byte (issue 14 item 1)', () => {
  let completed: string;
  let working: string;
  let parked: string;
  let failed: string;

  beforeAll(async () => {
    completed = await modernTask('slow_compute', { seconds: 0 });
    working = await modernTask('slow_compute', { seconds: 3600 });
    parked = await modernTask('confirm_delete', { filename: 'c.txt' });
    failed = await modernTask('protocol_error_job', {});
    await waitStatus(modern, completed, 'completed');
    await waitStatus(modern, working, 'working');
    await waitStatus(modern, parked, 'input_required');
    await waitStatus(modern, failed, 'failed');
  }, 60_000);

  it('tasks/get of every status, odd but valid ids and params, unknown and foreign ids, the -32021 gate', async () => {
    for (const taskId of [completed, working, parked, failed]) {
      const answer = await same(modern, modernLine('tasks/get', { taskId }), 'fast');
      expect(JSON.parse(answer)).toMatchObject({
        result: { taskId, _meta: { 'io.modelcontextprotocol/serverInfo': {} } },
      });
    }
    await same(modern, modernLine('tasks/get', { taskId: completed }, { id: 'a string id' }), 'fast');
    await same(modern, modernLine('tasks/get', { taskId: completed }, { id: 0 }), 'fast');
    await same(modern, modernLine('tasks/get', { taskId: completed, unknownField: [1] }), 'fast');
    await same(modern, modernLine('tasks/get', { taskId: completed, _meta: { progressToken: 3 } }), 'fast');
    for (const taskId of ['no-such-task', '', 'x'.repeat(300), 7]) {
      await same(modern, modernLine('tasks/get', { taskId }), 'fast');
    }
    await same(modern, modernLine('tasks/get', {}), 'fast');
    const gated = await same(modern, modernLine('tasks/get', { taskId: completed }, { declare: false }), 'fast');
    expect(JSON.parse(gated)).toMatchObject({ error: { code: -32021 } });
    await same(modern, modernLine('tasks/cancel', { taskId: completed }), 'fast');
    await same(modern, modernLine('tasks/cancel', { taskId: 'no-such-task' }), 'fast');
    await same(
      modern,
      modernLine('tasks/update', { taskId: parked, inputResponses: { k: { action: 'nope' } } }),
      'fast',
    );
    await same(modern, modernLine('terminus/tasks/lookup', { submissionKey: 'k'.repeat(300) }), 'fast');
    await same(modern, modernLine('terminus/tasks/lookup', {}), 'fast');
  });

  it('envelopes and shapes the SDK decides go to it: missing or bad envelope, revision, ids, members', async () => {
    const bare = line('tasks/get', { taskId: completed });
    await same(modern, bare, 'sdk');
    await same(
      modern,
      line('tasks/get', {
        taskId: completed,
        _meta: { ...envelope(), 'io.modelcontextprotocol/clientCapabilities': 5 },
      }),
      'sdk',
    );
    await same(
      modern,
      line('tasks/get', {
        taskId: completed,
        _meta: { ...envelope(), 'io.modelcontextprotocol/protocolVersion': '2027-01-01' },
      }),
      'sdk',
    );
    // (A null, boolean or fractional id, or an unknown top-level member, never reaches either path:
    // the stdio transport's JSON-RPC schema drops the line.)
    await same(modern, modernLine('terminus/tasks/logs', { taskId: completed }), 'sdk');
  });

  it('tasks/cancel of a live task changes it the same way on either path (one task per side)', async () => {
    const [a, b] = [
      await modernTask('slow_compute', { seconds: 3600 }),
      await modernTask('slow_compute', { seconds: 3600 }),
    ];
    await waitStatus(modern, a, 'working');
    await waitStatus(modern, b, 'working');
    const cancelA = modernLine('tasks/cancel', { taskId: a }, { id: 'c' });
    const cancelB = modernLine('tasks/cancel', { taskId: b }, { id: 'c' });
    const [onFast, onSlow] = [
      await modern.fast.request(cancelA.text, 'c'),
      await modern.slow.request(cancelB.text, 'c'),
    ];
    expect(onFast).toBe(onSlow);
    await waitStatus(modern, a, 'cancelled');
    await same(modern, modernLine('tasks/get', { taskId: a }), 'fast');
  });
});

describe('stdio, 2025-11-25 connection: tasks/get and tasks/cancel fast = SDK, byte for byte (issue 14 item 1)', () => {
  let completed: string;
  let working: string;
  let failed: string;

  beforeAll(async () => {
    completed = await legacyTask('slow_compute', { seconds: 0 });
    working = await legacyTask('slow_compute', { seconds: 3600 });
    failed = await legacyTask('protocol_error_job', {});
    await waitStatus(legacy, completed, 'completed');
    await waitStatus(legacy, working, 'working');
    await waitStatus(legacy, failed, 'failed');
  }, 60_000);

  it('tasks/get and tasks/cancel: every answer, the errors, the terminal-cancel -32602 (T-62, T-68)', async () => {
    for (const taskId of [completed, working, failed]) {
      const answer = await same(legacy, line('tasks/get', { taskId }), 'fast');
      expect(JSON.parse(answer)).toMatchObject({ result: { taskId } });
    }
    await same(legacy, line('tasks/get', { taskId: completed }, 'a string id'), 'fast');
    await same(legacy, line('tasks/get', { taskId: completed, unknownField: { a: 1 } }), 'fast');
    for (const params of [{ taskId: 'no-such-task' }, { taskId: '' }, { taskId: 'y'.repeat(300) }, { taskId: 7 }, {}]) {
      await same(legacy, line('tasks/get', params), 'fast');
      await same(legacy, line('tasks/cancel', params), 'fast');
    }
    await same(legacy, line('tasks/get', undefined), 'fast');
    for (const taskId of [completed, failed]) {
      const answer = await same(legacy, line('tasks/cancel', { taskId }), 'fast');
      expect(JSON.parse(answer)).toMatchObject({ error: { code: -32602, data: { reason: 'already_terminal' } } });
    }
  });

  it('shapes the SDK decides, and an id still in flight (a blocking tasks/result), go to it', async () => {
    await same(legacy, line('tasks/list', {}), 'sdk');
    const held = line('tasks/result', { taskId: working }, 'held');
    legacy.fast.write(held.text);
    legacy.slow.write(held.text);
    await legacy.fast.sawDispatch('sdk-dispatch tasks/result "held"');
    await legacy.slow.sawDispatch('sdk-dispatch tasks/result "held"');
    await same(legacy, line('tasks/get', { taskId: completed }, 'held'), 'sdk');
    await same(legacy, line('tasks/get', { taskId: completed }, 'free'), 'fast');
  });

  it('tasks/cancel of a live task (one per side): the same answer', async () => {
    const [a, b] = [
      await legacyTask('slow_compute', { seconds: 3600 }),
      await legacyTask('slow_compute', { seconds: 3600 }),
    ];
    await waitStatus(legacy, a, 'working');
    await waitStatus(legacy, b, 'working');
    const norm = (text: string, taskId: string): unknown => {
      const m = JSON.parse(text.replaceAll(taskId, '<task>')) as { result: Record<string, unknown> };
      const { createdAt: _c, lastUpdatedAt: _u, ...rest } = m.result;
      return { ...m, result: rest };
    };
    const [onFast, onSlow] = [
      await legacy.fast.request(line('tasks/cancel', { taskId: a }, 'c').text, 'c'),
      await legacy.slow.request(line('tasks/cancel', { taskId: b }, 'c').text, 'c'),
    ];
    expect(norm(onFast, a)).toEqual(norm(onSlow, b));
    expect(JSON.parse(onFast)).toMatchObject({ result: { status: 'cancelled' } });
  });
});

// Issue 31 item 3: a `tools/call` that creates a task, answered ahead of the SDK on both eras. Each
// side creates its own task, so the lines are compared with the task id and its times written as
// placeholders (every other byte, key order included, as written).
function scrubCreated(text: string): string {
  let out = text;
  for (const match of text.matchAll(/"taskId":"([^"]+)"/g)) out = out.replaceAll(match[1] as string, '<task>');
  return out.replace(/"(createdAt|lastUpdatedAt)":"[^"]+"/g, '"$1":"<time>"');
}

async function sameCreated(pair: Pair, request: { text: string; id: unknown }, expected: Expect): Promise<string> {
  const before = pair.fast.dispatches().length;
  const [onFast, onSlow] = [
    await pair.fast.request(request.text, request.id),
    await pair.slow.request(request.text, request.id),
  ];
  expect(scrubCreated(onFast)).toBe(scrubCreated(onSlow));
  const ping = line('ping', undefined);
  await pair.fast.request(ping.text, ping.id);
  await pair.fast.sawDispatch(`sdk-dispatch ping ${JSON.stringify(ping.id)}`);
  const between = pair.fast.dispatches().slice(before, -1);
  if (expected === 'fast') expect(between, `fast path must answer ${request.text}`).toEqual([]);
  else expect(between, `the SDK must answer ${request.text}`).toHaveLength(1);
  return scrubCreated(onFast);
}

describe('stdio: tools/call creating a task, fast = SDK on both eras (issue 31 item 3)', () => {
  it('2026-07-28: a task tool with the extension declared is created without the SDK; the rest go to it', async () => {
    const created = await sameCreated(
      modern,
      modernLine('tools/call', { name: 'slow_compute', arguments: { seconds: 3600 } }),
      'fast',
    );
    expect(JSON.parse(created)).toMatchObject({ result: { resultType: 'task', taskId: '<task>', content: [] } });
    await sameCreated(modern, modernLine('tools/call', { name: 'failing_job' }), 'fast');
    await sameCreated(modern, modernLine('tools/call', { name: 'slow_compute', arguments: { seconds: 'x' } }), 'fast');
    await sameCreated(modern, modernLine('tools/call', { name: 'greet', arguments: { name: 'x' } }), 'sdk');
    await sameCreated(
      modern,
      modernLine('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }, { declare: false }),
      'sdk',
    );
    await sameCreated(modern, modernLine('tools/call', { name: 'test_tool_with_task', arguments: {} }), 'sdk');
    await sameCreated(modern, modernLine('tools/call', { name: 'nope' }), 'sdk');
  });

  it('2025-11-25: a task-augmented call is created without the SDK; a plain call, a forbidden tool go to it (T-10, T-15)', async () => {
    const created = await sameCreated(
      legacy,
      line('tools/call', { name: 'slow_compute', arguments: { seconds: 3600 }, task: { ttl: 60_000 } }),
      'fast',
    );
    expect(JSON.parse(created)).toMatchObject({ result: { task: { taskId: '<task>', status: 'working' } } });
    await sameCreated(
      legacy,
      line('tools/call', { name: 'slow_compute', arguments: { seconds: 1 }, task: { ttl: -1 } }),
      'fast',
    );
    await sameCreated(legacy, line('tools/call', { name: 'slow_compute', arguments: { seconds: 0 } }), 'sdk');
    await sameCreated(legacy, line('tools/call', { name: 'greet', arguments: { name: 'x' }, task: {} }), 'sdk');
  });
});
