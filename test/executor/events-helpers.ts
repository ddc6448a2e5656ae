/**
 * The setup the `executor.events()` end-to-end tests share: the built `terminus serve` (with its
 * `run_tests` demo) for the whole file, and a follower that breaks part-way and hands its cursor to
 * a second follower in a new executor on the same ledger.
 */
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { systemClock, systemIds, systemRandom } from '../../src/core/system.js';
import { connectServer } from '../../src/executor/adapters/index.js';
import { createExecutor } from '../../src/executor/executor.js';
import type { Executor } from '../../src/executor/executor-types.js';
import type { ServerEvent } from '../../src/executor/wire-port.js';
import { assertBuilt, killAll, tempDir } from '../cli/helpers.js';
import { serveBuilt, type BuiltServe } from '../fixtures/built-serve.js';
import { openExecutor } from './executor-helpers.js';

export const SLOW = 120_000;

/** Starts the built `terminus serve ...extra` before the file's tests and stops it after; its URL. */
export function useBuiltServe(prefix: string, extra: readonly string[] = []): { url(): string } {
  const dir = tempDir(prefix);
  let served: BuiltServe | undefined;
  beforeAll(async () => {
    assertBuilt();
    served = await serveBuilt(join(dir.path, 'server.db'), extra);
  }, SLOW);
  afterAll(async () => {
    await served?.stop();
    killAll();
    dir.remove();
  });
  return {
    url() {
      if (served === undefined) throw new Error('the server is not started yet');
      return served.url;
    },
  };
}

export interface HandOver {
  /** Every event the two followers read, in the order they read them. */
  readonly seen: ServerEvent[];
  /** The first follower's `seq` when it broke. */
  readonly firstSeq: number | undefined;
  /** The second follower read to the task's end. */
  readonly secondDone: boolean;
}

/**
 * Submits `run_tests` with `suite` over `wire`, follows its events until `breakAfter` of them (the
 * stream breaks there), closes that executor, then reads on from the cursor in a new executor on the
 * same ledger, after `meanwhile` (given that executor and the operation id).
 */
export async function followAndHandOver(options: {
  readonly url: string;
  readonly wire: 'mcp-tasks-ext' | 'aip-151';
  readonly callNodeId: string;
  readonly suite: Record<string, unknown>;
  readonly breakAfter: number;
  readonly meanwhile?: (later: Executor, operationId: string) => Promise<void>;
}): Promise<HandOver> {
  const { url, wire } = options;
  const { executor, ledger } = await openExecutor(url, { wire });
  const seen: ServerEvent[] = [];
  const op = await executor.submit({
    callNodeId: options.callNodeId,
    server: 's',
    tool: 'run_tests',
    args: options.suite,
  });
  const first = executor.events(op.operationId);
  for await (const event of first) {
    seen.push(event);
    if (seen.length === options.breakAfter) break; // the stream breaks here
  }
  const { cursor, seq: firstSeq } = first;
  await executor.close();
  const later = await createExecutor({
    ledger,
    connect: (_s, forced) => connectServer({ url }, { clock: systemClock, wire: forced ?? wire }),
    clock: systemClock,
    random: systemRandom,
    ids: systemIds,
  });
  try {
    await options.meanwhile?.(later, op.operationId);
    const second = later.events(op.operationId, { ...(cursor === undefined ? {} : { cursor }) });
    for await (const event of second) seen.push(event);
    return { seen, firstSeq, secondDone: second.done };
  } finally {
    await later.close();
  }
}
