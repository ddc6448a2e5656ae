/**
 * Issue 11, defect 6 (executor side): `OperationStatus` says what the executor is doing, on every
 * change: polling, or unreachable / throttled with the next retry's time and attempt; a cancel
 * requested, delivered, confirmed; the server's progress, again at once after a restart. Against a
 * real terminus server over HTTP, with faults from a proxy on loopback.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { OperationHandle, OperationStatus } from '../../src/executor/executor-types.js';
import { toStatus } from '../../src/executor/interpreter-status.js';
import { createMemoryLedger } from '../../src/executor/ledger/memory.js';
import { newOperation } from '../../src/executor/operation.js';
import { openExecutor, startProxy, startServer, waitFor, type TestServer } from './executor-helpers.js';

let server: TestServer;

beforeAll(async () => {
  server = await startServer();
});
afterAll(async () => {
  await server.close();
});

/** Collects every status of `op` until its stream ends. */
function collect(op: OperationHandle): { seen: OperationStatus[]; done: Promise<void> } {
  const seen: OperationStatus[] = [];
  const done = (async () => {
    for await (const status of op.statuses()) seen.push(status);
  })();
  return { seen, done };
}

describe('toStatus: the cancel steps read from the record', () => {
  it('requested until the server acknowledges the generation, delivered after, confirmed once terminal', () => {
    const base = newOperation({
      id: 'op-1',
      callNodeId: 'n-1',
      requestDigest: 'd',
      tool: { name: 't', descriptorVersion: 'v' },
      body: {},
      wire: { name: 'mcp-tasks-ext', adapterVersion: 'a' },
      submissionKey: 'k',
      executionEpoch: 0,
      now: 0,
      budgetMs: null,
    });
    expect(toStatus({ ...base, state: 'WORKING' }, 0, false).cancel).toBeUndefined();
    const requested = { ...base, state: 'CANCEL_REQUESTED' as const, cancelGeneration: 1, wakeAt: 10 };
    expect(toStatus(requested, 0, false)).toMatchObject({ cancel: 'requested', activity: { kind: 'polling' } });
    expect(toStatus({ ...requested, cancelAckedGeneration: 1 }, 0, false).cancel).toBe('delivered');
    expect(toStatus({ ...requested, state: 'CANCELLED_ACCEPTED' }, 0, false).cancel).toBe('confirmed');
    expect(toStatus({ ...requested, state: 'CANCELLED_ACCEPTED' }, 0, false).activity).toBeUndefined();
  });
});

describe('OperationStatus: activity, cancel, progress', () => {
  it('polling, then unreachable and throttled with retry time and attempt, then polling again', async () => {
    let polls = 0;
    const proxy = await startProxy(server.url, (request) => {
      // The driver's status reads: on our server, reads of the task's events (issue 32), then the fetch.
      if (request.method !== 'tasks/get' && request.method !== 'terminus/tasks/events') return { kind: 'forward' };
      polls += 1;
      if (polls === 2 || polls === 3) return { kind: 'drop_response' };
      if (polls === 4) return { kind: 'answer', status: 429, headers: { 'retry-after': '1' } };
      return { kind: 'forward' };
    });
    const { executor } = await openExecutor(proxy.url);
    try {
      const op = await executor.submit({
        callNodeId: 's-act',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 2 },
      });
      const { seen, done } = collect(op);
      expect((await op.result()).status).toBe('completed');
      await done;
      const kinds = seen.map((s) => s.activity?.kind ?? '-');
      expect(kinds).toContain('polling');
      const unreachable = seen.filter((s) => s.activity?.kind === 'unreachable');
      expect(unreachable.map((s) => (s.activity as { attempt: number }).attempt)).toEqual([1, 2]);
      const throttled = seen.find((s) => s.activity?.kind === 'throttled');
      expect(throttled?.activity).toMatchObject({ attempt: 1 });
      const retry = throttled!.activity as { retryAt: number; reason: string };
      // Retry-After: 1 s is honoured by the next attempt's time (C6); `at` is read just after the step.
      expect(retry.retryAt - throttled!.at).toBeGreaterThan(900);
      expect(retry.reason).toMatch(/429/);
      expect(kinds.lastIndexOf('polling')).toBeGreaterThan(kinds.indexOf('throttled'));
      expect(seen.at(-1)?.state).toBe('ACCEPTED');
    } finally {
      await executor.close();
      await proxy.close();
    }
  });

  it('cancel: requested, then delivered (empty ack of the Tasks extension), then confirmed', async () => {
    let hold: (() => void) | undefined;
    const held = new Promise<void>((resolve) => (hold = resolve));
    let cancels = 0;
    const proxy = await startProxy(server.url, (request) => {
      // The first cancel's answer waits until the test saw `requested`.
      if (request.method === 'tasks/cancel' && cancels++ === 0) return { kind: 'hold_response', release: held };
      return { kind: 'forward' };
    });
    const { executor } = await openExecutor(proxy.url);
    try {
      const op = await executor.submit({
        callNodeId: 's-cxl',
        server: 's',
        tool: 'slow_compute',
        args: { seconds: 30 },
      });
      const { seen, done } = collect(op);
      await waitFor(() => seen.some((s) => s.state === 'WORKING'), 'WORKING');
      expect((await op.cancel()).requested).toBe(true);
      await waitFor(() => seen.some((s) => s.cancel === 'requested'), 'cancel requested');
      hold!();
      expect((await op.result()).status).toBe('cancelled');
      await done;
      const steps = [...new Set(seen.flatMap((s) => (s.cancel === undefined ? [] : [s.cancel])))];
      // `delivered` shows only if the ack lands before a status read sees `cancelled` (a race here).
      expect(steps.filter((step) => step !== 'delivered')).toEqual(['requested', 'confirmed']);
      expect(steps.at(-1)).toBe('confirmed');
      expect(seen.at(-1)).toMatchObject({ state: 'CANCELLED_ACCEPTED', cancel: 'confirmed' });
    } finally {
      await executor.close();
      await proxy.close();
    }
  });

  it('progress: the server-reported progress, and again first thing after a restart', async () => {
    const ledger = createMemoryLedger();
    const first = await openExecutor(server.url, { ledger });
    const op = await first.executor.submit({
      callNodeId: 's-prog',
      server: 's',
      tool: 'slow_compute',
      args: { seconds: 1.5 },
    });
    const { seen } = collect(op);
    await waitFor(() => seen.some((s) => s.progress !== undefined), 'progress');
    expect(seen.find((s) => s.progress !== undefined)?.progress).toEqual({ done: 0, total: 1.5, message: 'computing' });
    await first.executor.close();
    const second = await openExecutor(server.url, { ledger });
    try {
      const again = await second.executor.attach('s-prog', { budgetMs: 10_000 });
      const iterator = again!.statuses()[Symbol.asyncIterator]();
      const firstStatus = (await iterator.next()).value as OperationStatus;
      expect(firstStatus.progress).toEqual({ done: 0, total: 1.5, message: 'computing' });
      await iterator.return?.();
      expect((await again!.result()).status).toBe('completed');
    } finally {
      await second.executor.close();
    }
  });
});
