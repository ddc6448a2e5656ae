import { afterEach, describe, expect, test } from 'vitest';
import { isTerminusError } from '../../src/core/errors.js';
import { systemClock } from '../../src/core/system.js';
import { prepareLine } from '../../src/runner/task-log.js';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { engineFor, gate, nodeStore, OWNER, text, tool, untilStatus } from './helpers.js';

/** Issue 18: `ctx.log` / `ctx.output` as a handler sees them. */
const LIMITS = { maxLineBytes: 64 };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    if (isTerminusError(error, 'invalid_argument')) return error.message;
    throw error;
  }
  throw new Error('expected invalid_argument');
}

describe('prepareLine: what ctx.log accepts', () => {
  test('a non-string text, a text over 1 MiB and fields that are not plain JSON are refused, naming the problem', () => {
    expect(refusal(() => prepareLine('log', 42, undefined, LIMITS))).toBe(
      'ctx.log(text, fields?) takes a string text, got number',
    );
    expect(refusal(() => prepareLine('output', undefined, undefined, LIMITS))).toContain(
      'ctx.output(text) takes a string',
    );
    expect(refusal(() => prepareLine('log', 'x'.repeat(1024 * 1024 + 1), undefined, LIMITS))).toContain(
      'over the 1 MiB a line may have',
    );
    expect(refusal(() => prepareLine('log', 'ok', [1, 2], LIMITS))).toContain(
      'fields must be a plain object, got an array',
    );
    expect(refusal(() => prepareLine('log', 'ok', new Date(0), LIMITS))).toContain(
      'fields must be a plain object, got a Date',
    );
    expect(refusal(() => prepareLine('log', 'ok', { at: new Date(0) }, LIMITS))).toContain('fields.at is a Date');
    expect(refusal(() => prepareLine('log', 'ok', { n: 10n }, LIMITS))).toContain('fields.n is a bigint');
    expect(refusal(() => prepareLine('log', 'ok', { n: [1, Number.NaN] }, LIMITS))).toContain('fields.n[1] is NaN');
    expect(refusal(() => prepareLine('log', 'ok', { f: () => 1 }, LIMITS))).toContain('fields.f is a function');
    expect(refusal(() => prepareLine('log', 'ok', { u: undefined }, LIMITS))).toContain('fields.u is undefined');
    const cycle: Record<string, unknown> = {};
    cycle.self = cycle;
    expect(refusal(() => prepareLine('log', 'ok', cycle, LIMITS))).toContain('fields.self refers back to itself');
    expect(refusal(() => prepareLine('log', 'ok', { big: 'y'.repeat(100) }, LIMITS))).toContain(
      'over the 64 a line may have',
    );
  });

  test('a text over maxLineBytes is cut at a character boundary and marked; a shorter one is kept as is', () => {
    expect(prepareLine('log', 'short', { a: 1 }, LIMITS)).toEqual({ stream: 'log', text: 'short', fields: { a: 1 } });
    const long = '€'.repeat(100); // 300 bytes
    const cut = prepareLine('log', long, undefined, LIMITS).text;
    expect(cut).toMatch(/^€+… \[truncated: 300 bytes in all\]$/);
    expect(Buffer.byteLength(cut)).toBeLessThanOrEqual(64);
    expect(cut).not.toContain('\uFFFD');
  });
});

describe('ctx.log in a running task', () => {
  let engine: TaskEngine | undefined;
  afterEach(async () => {
    await engine?.stop();
    engine = undefined;
  });

  test('lines written without awaiting go in order, batched while an append is in flight; the bound drops and counts', async () => {
    const store = nodeStore(createMemoryTaskStore());
    const refusals: string[] = [];
    const logger = tool('logger', async (_args, ctx) => {
      const writes = Array.from({ length: 50 }, (_, i) => ctx.log(`line ${i + 1}`, { i }));
      await Promise.all(writes);
      await ctx.log(42 as unknown as string).catch((e: Error) => refusals.push(e.message));
      await ctx.log('x'.repeat(10_000));
      return text('done');
    });
    engine = engineFor(store, [logger], { logLimits: { maxLines: 20, maxLineBytes: 1024, maxBytes: 1_000_000 } });
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'logger', args: {}, wire: 'mcp-tasks-ext' });
    await untilStatus(store, task.id, (t) => t.status === 'completed');
    // The first line leaves at once; the 49 written while it was in flight go together.
    expect(store.calls.get('appendLog')).toBe(3);
    expect(refusals).toEqual(['ctx.log(text, fields?) takes a string text, got number']);
    const page = await engine.readLog(OWNER, task.id, { after: 0, limit: 1000 });
    expect(page.dropped).toBe(31);
    expect(page.lines.map((l) => l.seq)).toEqual(Array.from({ length: 20 }, (_, i) => i + 32));
    expect(page.lines.slice(0, 2).map((l) => [l.text, l.fields])).toEqual([
      ['line 32', { i: 31 }],
      ['line 33', { i: 32 }],
    ]);
    const last = page.lines.at(-1);
    expect(last?.text).toMatch(/… \[truncated: 10000 bytes in all\]$/);
    expect(Buffer.byteLength(last?.text ?? '')).toBeLessThanOrEqual(1024);
    expect(page).toMatchObject({ next: 51, done: true });
  });

  test('a line written after a cancel won is refused (already_terminal): the log of a terminal task is final', async () => {
    const store = createMemoryTaskStore();
    const cancelled = gate();
    const outcome: string[] = [];
    const stubborn = tool('stubborn', async (_args, ctx) => {
      await ctx.log('before');
      await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
      await ctx.log('after').catch((e: unknown) => outcome.push(isTerminusError(e) ? e.code : String(e)));
      cancelled.open();
      return text('late');
    });
    engine = engineFor(store, [stubborn]);
    engine.start();
    const { task } = await engine.submit({ owner: OWNER, tool: 'stubborn', args: {}, wire: 'mcp-tasks-ext' });
    await untilStatus(store, task.id, () => true);
    for (;;) {
      if ((await engine.readLog(OWNER, task.id, {})).lines.length === 1) break;
      await systemClock.sleep(5);
    }
    await engine.cancel(OWNER, task.id);
    await cancelled.promise;
    expect(outcome).toEqual(['already_terminal']);
    const page = await engine.readLog(OWNER, task.id, {});
    expect(page.lines.map((l) => l.text)).toEqual(['before']);
    expect(page).toMatchObject({ done: true, next: 1 });
  });

  test('engine.readLog refuses a bad cursor or limit with invalid_argument naming it', async () => {
    const store = createMemoryTaskStore();
    engine = engineFor(store, [tool('noop', async () => text('ok'))]);
    const { task } = await engine.submit({ owner: OWNER, tool: 'noop', args: {}, wire: 'mcp-tasks-ext' });
    for (const [query, field] of [
      [{ after: -1 }, 'after'],
      [{ after: 0.5 }, 'after'],
      [{ limit: 0 }, 'limit'],
      [{ limit: 1001 }, 'limit'],
    ] as const) {
      const error = await engine.readLog(OWNER, task.id, query).catch((e: unknown) => e);
      expect(isTerminusError(error, 'invalid_argument'), JSON.stringify(query)).toBe(true);
      expect((error as Error).message).toMatch(new RegExp(`^${field} must be`));
    }
    const foreign = await engine.readLog('mallory', task.id, {}).catch((e: unknown) => e);
    expect(isTerminusError(foreign, 'not_found')).toBe(true);
  });

  test('logLimits: maxBytes must hold one full line (twice maxLineBytes)', () => {
    expect(() => engineFor(createMemoryTaskStore(), [], { logLimits: { maxLineBytes: 1024, maxBytes: 2000 } })).toThrow(
      'logLimits.maxBytes (2000) must be at least twice maxLineBytes (1024)',
    );
  });
});
