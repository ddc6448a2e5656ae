import type { Clock, Ids, Logger, Random } from '../core/ports.js';
import { silentLogger } from '../core/ports.js';
import { systemClock, systemIds, systemRandom } from '../core/system.js';
import type { TaskEvents } from '../store/events.js';
import { createLocalEvents } from '../store/events.js';
import type { TaskStore } from '../store/port.js';
import { combineObservers, silentObserver, type TaskObserver } from './observer.js';
import { DEFAULT_MAX_POLL_INTERVAL_MS } from './poll-interval.js';
import { DEFAULT_LOG_LIMITS } from '../core/log.js';
import type { LogLimits } from './task-log.js';
import { inThreadHandlers, type HandlerHost } from './handlers.js';
import { HandlerWorkers, type WorkersOptions } from './workers/pool.js';
import type { TaskToolDefinition } from './tool.js';
import type { WebhookSettings } from './webhooks.js';

/**
 * Everything `createEngine` takes. Only `store` and `tools` are required; `clock`, `ids` and `random`
 * default to the system ones (a simulation or test passes its own).
 */
export interface EngineOptions {
  readonly store: TaskStore;
  /** The tools this node serves; a list or a map by name. Names MUST be unique. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- a tool's Args type is erased here
  readonly tools: readonly TaskToolDefinition<any>[] | ReadonlyMap<string, TaskToolDefinition>;
  /** Default `systemClock`. */
  readonly clock?: Clock;
  /** Default `systemIds`. */
  readonly ids?: Ids;
  /** Jitters the claim interval (x0.75..1.25) so several nodes do not poll in lockstep. Default `systemRandom`. */
  readonly random?: Random;
  readonly logger?: Logger;
  /** Shared with the wires (and, through a bridge, other nodes); default: in-process events. */
  readonly events?: TaskEvents;
  /** Lease owner id of this node's runner; default `ids.unique('worker')`. */
  readonly nodeId?: string;
  /** Lease length; a dead node's tasks are re-run this long after its last heartbeat. 10 s. */
  readonly leaseMs?: number;
  /** Heartbeat period, which is also the cross-node cancel and input latency. leaseMs / 3. */
  readonly heartbeatMs?: number;
  /** How often an idle runner looks for work it was not woken for (other nodes, expiries). 250 ms. */
  readonly claimIntervalMs?: number;
  /** Handlers running at once on this node. 16. */
  readonly concurrency?: number;
  /** TTL sweep period. 60 s. */
  readonly sweepIntervalMs?: number;
  /** TTL of a task whose tool and caller name none. 1 h. */
  readonly defaultTtlMs?: number;
  /** Upper bound for every TTL and keepAlive; undefined: no bound beyond the tool's. */
  readonly maxTtlMs?: number;
  /** Poll interval suggested to clients when the tool names none. 1000 ms. */
  readonly defaultPollIntervalMs?: number;
  /**
   * Cap of the adaptive poll interval (`poll-interval.ts`): a working task suggests a quarter of the
   * time its tool's runs are still expected to take, between its tool's `pollIntervalMs` (or the
   * default; the floor) and this. 30 000 ms. Equal to or below the floor (0 included): the floor,
   * fixed, so every read of a task suggests the same interval.
   */
  readonly maxPollIntervalMs?: number;
  /**
   * Runs (claims) a task may have; a task claimed again after this many runs ended without an
   * outcome (each crashed or could not record it) fails with the reason instead of running again.
   * 50: a node restarted 50 times during one task is not a deployment, it is a loop.
   */
  readonly maxAttempts?: number;
  /** Largest `arguments` (as JSON, in bytes) a call may send; larger is `invalid_argument`. 1 MiB. */
  readonly maxArgumentBytes?: number;
  /**
   * Non-terminal tasks one owner may have; one more submit is `resource_exhausted` (T-79). Counted
   * by the store in the create's own write (`NewTask.maxLive`), so concurrent submits may pass it by
   * the number in flight. 10,000; 0: none.
   */
  readonly maxLiveTasksPerOwner?: number;
  /**
   * How long a submission-key tombstone (a key `lookupKey` burned, S6) is kept; the sweeper then
   * deletes it and the key may be used again. 7 days.
   */
  readonly keyRetentionMs?: number;
  /** Receives every lifecycle event (created, claimed, run ended, ...): logs, metrics, traces. */
  readonly observer?: TaskObserver;
  /**
   * Bounds of each task's own log (`ctx.log`, `ctx.output`): lines and bytes kept per task (the
   * oldest are dropped and counted past either) and the text bytes of one line (longer is
   * truncated and marked). Defaults `DEFAULT_LOG_LIMITS`: 10,000 lines, 4 MiB, 8 KiB.
   */
  readonly logLimits?: Partial<LogLimits>;
  /**
   * Runs task handlers in `count` worker processes instead of on this thread's event loop, one
   * run per worker at a time (so `concurrency` is at most `count`), each under a JS heap and a
   * memory limit. Each worker imports `module` and finds the tools by name: the module MUST be
   * importable on its own and define every tool in `tools`. Leases, heartbeats and every store
   * write stay in this process. Inline calls (no task) still run here. Default: no workers.
   * @example
   * workers: { count: 2, module: new URL('./tools.js', import.meta.url) },
   */
  readonly workers?: WorkersOptions;
  /**
   * How long a handler has to return once its signal aborted (a cancel, a shutdown, a lost
   * lease). Past it, a handler in a worker process is killed with its worker (the slot is free at
   * once), and one on the serving thread, which nothing can stop, is given up: `stop()` returns
   * without it and its task's lease is left to lapse. 10 s; a cooperating handler returns in
   * milliseconds.
   */
  readonly abortGraceMs?: number;
  /**
   * Webhooks (issue 32): the operator's endpoints (for every task, for one caller's) and the
   * target policy calls' own endpoints are checked against. Delivery itself runs apart
   * (`startWebhookDelivery` on the store's outbox). Default: none, private targets refused.
   */
  readonly webhooks?: WebhookSettings;
}

/** The options with every default applied. */
export interface EngineSettings {
  readonly store: TaskStore;
  readonly tools: ReadonlyMap<string, TaskToolDefinition>;
  readonly clock: Clock;
  readonly ids: Ids;
  readonly random: Random | undefined;
  readonly logger: Logger;
  readonly events: TaskEvents;
  readonly nodeId: string;
  readonly leaseMs: number;
  readonly heartbeatMs: number;
  readonly claimIntervalMs: number;
  readonly concurrency: number;
  readonly sweepIntervalMs: number;
  readonly defaultTtlMs: number;
  readonly maxTtlMs: number | undefined;
  readonly defaultPollIntervalMs: number;
  readonly maxPollIntervalMs: number;
  readonly maxAttempts: number;
  readonly maxArgumentBytes: number;
  readonly maxLiveTasksPerOwner: number;
  readonly keyRetentionMs: number;
  readonly observer: TaskObserver;
  readonly logLimits: LogLimits;
  readonly abortGraceMs: number;
  /** Where task handlers run: this thread, or `workers` processes. */
  readonly handlers: HandlerHost;
  readonly webhooks: WebhookSettings | undefined;
}

export function resolveOptions(options: EngineOptions): EngineSettings {
  const leaseMs = positive('leaseMs', options.leaseMs ?? 10_000);
  const heartbeatMs = positive('heartbeatMs', options.heartbeatMs ?? Math.max(1, Math.floor(leaseMs / 3)));
  if (heartbeatMs >= leaseMs) {
    throw new RangeError(`heartbeatMs (${heartbeatMs}) must be shorter than leaseMs (${leaseMs})`);
  }
  const ids = options.ids ?? systemIds;
  const tools = toolMap(options.tools);
  const logger = options.logger ?? silentLogger;
  const workers = options.workers;
  const clock = options.clock ?? systemClock;
  const limits = logLimits(options.logLimits ?? {});
  const concurrency = positive('concurrency', options.concurrency ?? workers?.count ?? 16);
  return {
    store: options.store,
    tools,
    clock,
    ids,
    random: options.random ?? systemRandom,
    logger,
    events: options.events ?? createLocalEvents(),
    nodeId: options.nodeId ?? ids.unique('worker'),
    leaseMs,
    heartbeatMs,
    claimIntervalMs: positive('claimIntervalMs', options.claimIntervalMs ?? 250),
    // One run per worker: a worker's death then takes only its own task.
    concurrency: workers === undefined ? concurrency : Math.min(concurrency, workers.count),
    sweepIntervalMs: positive('sweepIntervalMs', options.sweepIntervalMs ?? 60_000),
    defaultTtlMs: positive('defaultTtlMs', options.defaultTtlMs ?? 3_600_000),
    maxTtlMs: options.maxTtlMs === undefined ? undefined : positive('maxTtlMs', options.maxTtlMs),
    defaultPollIntervalMs: positive('defaultPollIntervalMs', options.defaultPollIntervalMs ?? 1000),
    maxPollIntervalMs: nonNegative('maxPollIntervalMs', options.maxPollIntervalMs ?? DEFAULT_MAX_POLL_INTERVAL_MS),
    maxAttempts: positive('maxAttempts', options.maxAttempts ?? 50),
    maxArgumentBytes: positive('maxArgumentBytes', options.maxArgumentBytes ?? 1024 * 1024),
    maxLiveTasksPerOwner: nonNegative('maxLiveTasksPerOwner', options.maxLiveTasksPerOwner ?? 10_000),
    keyRetentionMs: positive('keyRetentionMs', options.keyRetentionMs ?? 7 * 24 * 3_600_000),
    // Guarded: an observer that throws must not fail a command whose write already committed (S1).
    observer: options.observer === undefined ? silentObserver : combineObservers(options.observer),
    logLimits: limits,
    abortGraceMs: positive('abortGraceMs', options.abortGraceMs ?? 10_000),
    handlers:
      workers === undefined
        ? inThreadHandlers
        : new HandlerWorkers(workers, { tools: [...tools.keys()], logger, clock, logLimits: limits }),
    webhooks: options.webhooks,
  };
}

function logLimits(given: Partial<LogLimits>): LogLimits {
  const maxLineBytes = positive('logLimits.maxLineBytes', given.maxLineBytes ?? DEFAULT_LOG_LIMITS.maxLineBytes);
  const maxBytes = positive('logLimits.maxBytes', given.maxBytes ?? DEFAULT_LOG_LIMITS.maxBytes);
  // One line (text plus fields, each up to maxLineBytes) must fit, or the bound would drop the newest.
  if (maxBytes < 2 * maxLineBytes) {
    throw new RangeError(`logLimits.maxBytes (${maxBytes}) must be at least twice maxLineBytes (${maxLineBytes})`);
  }
  return {
    maxLines: positive('logLimits.maxLines', given.maxLines ?? DEFAULT_LOG_LIMITS.maxLines),
    maxBytes,
    maxLineBytes,
  };
}

function positive(name: string, value: number): number {
  if (!Number.isFinite(value) || value <= 0) throw new RangeError(`${name} must be a positive number, got ${value}`);
  return value;
}

function nonNegative(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 0)
    throw new RangeError(`${name} must be a non-negative integer, got ${value}`);
  return value;
}

function toolMap(tools: EngineOptions['tools']): ReadonlyMap<string, TaskToolDefinition> {
  if (!Array.isArray(tools)) return tools as ReadonlyMap<string, TaskToolDefinition>;
  const map = new Map<string, TaskToolDefinition>();
  for (const tool of tools as readonly TaskToolDefinition[]) {
    if (map.has(tool.name)) throw new RangeError(`duplicate tool name: ${tool.name}`);
    map.set(tool.name, tool);
  }
  return map;
}
