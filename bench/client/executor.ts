/**
 * Our executor (`createExecutor`) as the benchmarks drive it: a SQLite ledger in the scratch
 * directory, the real client adapters, and a wire wrapper that counts what goes on the wire
 * (polls per task, request instants, status hints) without changing it.
 */
import type { ClientWireName } from '../../src/executor/adapters/index.js';
import { connectServer, type ServerTarget } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Executor } from '../../src/executor/executor-types.js';
import type { Ledger } from '../../src/executor/ledger-port.js';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import type { ClientWire, WireStatusAnswer } from '../../src/executor/wire-port.js';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';

export interface WireStats {
  /** `getStatus` calls per task id. */
  readonly polls: Map<string, number>;
  /** `performance.now()` of every poll, and of every request of any kind. */
  readonly pollTimes: number[];
  readonly requestTimes: number[];
  hints: number;
}

export function newWireStats(): WireStats {
  return { polls: new Map(), pollTimes: [], requestTimes: [], hints: 0 };
}

/** The wire, counted; with `hints: false` its status hints are withheld (polling only). */
function instrument(wire: ClientWire, stats: WireStats, hints: boolean): ClientWire {
  const request =
    <A extends unknown[], R>(call: (...args: A) => Promise<R>) =>
    (...args: A): Promise<R> => {
      stats.requestTimes.push(performance.now());
      return call(...args);
    };
  return {
    wire: wire.wire,
    version: wire.version,
    submit: request((r, s) => wire.submit(r, s)),
    lookupKey: request((k, s) => wire.lookupKey(k, s)),
    getStatus: (taskId, signal) => {
      const now = performance.now();
      stats.requestTimes.push(now);
      stats.pollTimes.push(now);
      stats.polls.set(taskId, (stats.polls.get(taskId) ?? 0) + 1);
      return wire.getStatus(taskId, signal);
    },
    fetchResult: request((t, s) => wire.fetchResult(t, s)),
    cancel: request((t, s) => wire.cancel(t, s)),
    sendInput: request((t, r, s) => wire.sendInput(t, r, s)),
    ...(hints && wire.onStatusHint !== undefined
      ? {
          onStatusHint: (listener: (taskId: string, status: WireStatusAnswer) => void) =>
            wire.onStatusHint!((taskId, status) => {
              stats.hints += 1;
              listener(taskId, status);
            }),
        }
      : {}),
    ...(wire.watchTask === undefined ? {} : { watchTask: wire.watchTask.bind(wire) }),
    close: () => wire.close(),
  };
}

export interface BenchExecutor {
  readonly executor: Executor;
  readonly ledger: Ledger;
  close(): Promise<void>;
}

export async function openExecutor(options: {
  readonly target: ServerTarget;
  readonly wire: ClientWireName | 'auto';
  readonly ledgerPath: string;
  readonly stats: WireStats;
  readonly hints: boolean;
  readonly qps: number;
  /** Open the wire's push stream (HTTP listen / GET stream); default: as `hints`. */
  readonly listen?: boolean;
}): Promise<BenchExecutor> {
  const ledger = openSqliteLedger({ path: options.ledgerPath });
  const executor = await createExecutor({
    ledger,
    connect: async () =>
      instrument(
        await connectServer(options.target, {
          clock: systemClock,
          wire: options.wire,
          listen: options.listen ?? options.hints,
        }),
        options.stats,
        options.hints,
      ),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
    qps: options.qps,
  });
  return {
    executor,
    ledger,
    close: async () => {
      await executor.close();
      await ledger.close();
    },
  };
}
