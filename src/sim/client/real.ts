/**
 * The REAL executor (`createExecutor`: interpreter, token bucket, outbox) as one simulated client
 * process. It steps with the machine's own `next`, or with a deliberately broken variant of it
 * (`variants.ts`, through `createExecutorWith`). Its clock is a killable scope, its wire the real
 * Tasks-extension adapter over this process's channel (or the series' wire: `connect`), its ledger
 * the shared SQLite ledger. A crash kills the scope and the channel (no timer fires again, no answer
 * arrives); the next process is a new executor on the same ledger.
 */
import type { Ids } from '../../core/ports.js';
import { createExecutorWith } from '../../executor/executor.js';
import type { Executor } from '../../executor/executor-types.js';
import type { Ledger } from '../../executor/ledger-port.js';
import { next as realNext, type NextFn } from '../../executor/machine.js';
import type { ClientWire } from '../../executor/wire-port.js';
import type { ClockScope } from '../clock.js';
import type { SimRandom } from '../random.js';
import type { Trace } from '../trace.js';
import type { SimClient } from './sim-client.js';

export interface RealClientOptions {
  readonly name: string;
  readonly ledger: Ledger;
  /** The process's client adapter of the series' wire, over its faulty network links. */
  readonly connect: () => ClientWire;
  readonly scope: ClockScope;
  readonly random: SimRandom;
  readonly ids: Ids;
  readonly trace: Trace;
  readonly resubmitNeverCreated: boolean;
  readonly approve: (callNodeId: string, key: string) => Promise<unknown>;
  /** The executor follows operations by their task's events (`ExecutorOptions.followEvents`). */
  readonly followEvents: boolean;
  /** Test-only: a broken variant of the machine's `next()` (`variants.ts`); default the real one. */
  readonly next?: NextFn;
}

export async function startRealClient(o: RealClientOptions): Promise<SimClient> {
  let alive = true;
  const executor: Executor = await createExecutorWith(
    {
      ledger: o.ledger,
      connect: async () => o.connect(),
      clock: o.scope,
      random: o.random,
      ids: o.ids,
      approvalGate: (request) => o.approve(request.callNodeId, request.key),
      resubmitNeverCreated: o.resubmitNeverCreated,
      followEvents: o.followEvents,
      defaultBudgetMs: null,
    },
    o.next ?? realNext,
  );
  const handle = (node: string) => executor.handle(node);
  return {
    get alive() {
      return alive;
    },
    async submit(callNodeId, tool, args, budgetMs) {
      const h = await executor.submit({
        callNodeId,
        server: 'sim',
        tool,
        args,
        toolVersion: '1',
        ...(budgetMs === undefined ? {} : { budgetMs }),
      });
      // The caller waits for its receipt; an operation ending without one is the checkers' business.
      h.result().catch(() => {});
      o.trace.add(o.name, `submit ${callNodeId} -> ${h.operationId}`);
    },
    async resume() {
      await executor.resume();
    },
    async cancel(callNodeId) {
      // The caller who cancels waits for the confirmation: a waiter of its own, with a fresh budget
      // (C11), so a cancel after an earlier waiter gave up is still delivered and confirmed.
      const h = await executor.attach(callNodeId, { budgetMs: null });
      if (h === null) return 'no_operation';
      const outcome = await h.cancel();
      o.trace.add(o.name, `cancel ${callNodeId}: ${outcome.requested ? 'requested' : (outcome.reason ?? 'refused')}`);
      return outcome.requested ? 'applied' : (outcome.reason ?? 'refused');
    },
    async detach(callNodeId) {
      await (await handle(callNodeId))?.detach();
    },
    async reattach(callNodeId) {
      const h = await executor.attach(callNodeId, { budgetMs: null });
      h?.result().catch(() => {});
      o.trace.add(o.name, `attach ${callNodeId}: ${h === null ? 'no operation' : h.attached ? 'attached' : 'new'}`);
    },
    async events(callNodeId, options) {
      const h = await handle(callNodeId);
      return h === null ? null : executor.events(h.operationId, options);
    },
    kill() {
      alive = false;
      o.scope.kill();
      o.trace.add(o.name, 'crash');
    },
  };
}
