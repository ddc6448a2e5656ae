/**
 * One series = one seed: a workload, a fault plan, the real server (store + engine + Tasks-extension
 * handlers) and the real executor pieces (machine + SQLite `:memory:` ledger + Tasks-extension client
 * adapter) joined by the faulty in-process network, run on virtual time until every operation has
 * settled after the last fault healed (or the liveness bound passed), then checked.
 */
import { createTasksExtWire } from '../executor/adapters/tasks-ext/index.js';
import { openSqliteLedger } from '../executor/ledger/sqlite.js';
import type { ToolOperation } from '../executor/operation.js';
import type { NextFn } from '../executor/machine.js';
import { isSettled } from '../executor/transitions.js';
import type { TaskStore } from '../store/port.js';
import type { Violation } from './checks/invariants.js';
import type { SeriesMetrics } from './checks/metrics.js';
import { checkSeries } from './checks/series.js';
import { VirtualClock } from './clock.js';
import { describePlan, DELIVERY_FAULT_CLASSES, FAULT_CLASSES, PUSH_FAULT_CLASSES, type FaultClass } from './faults.js';
import { deliveryPlan, NO_DELIVERIES } from './delivery/plan.js';
import { SeriesDeliveries, type DeliveryHooks } from './delivery/series.js';
import { simIds } from './ids.js';
import { isScripted, scriptedClass, scriptedPlan, scriptedWorkload, swarmPlan } from './plan.js';
import { SimNetwork } from './network/channel.js';
import { SimPush } from './network/push.js';
import { pushPlan } from './push-faults.js';
import { WireLog } from './network/wire-log.js';
import { sfc32, seriesRandom } from './random.js';
import { MISBEHAVIOURS } from './network/misbehave.js';
import { newLedgerFacts, recordingLedger } from './client/recording-ledger.js';
import { startRealClient } from './client/real.js';
import type { SimClient } from './client/sim-client.js';
import { newServerFacts, type ServerFacts } from './server/facts.js';
import { SimServer, type StoreBackend } from './server/host.js';
import { settle } from './settle.js';
import { rerun } from './client/rerun.js';
import { Trace, type TraceEntry } from './trace.js';
import { drawWorkload, withEdges, type OperationPlan } from './workload.js';
import { simWire, type SimWireName } from './wires/index.js';
import { applicableFaults, forWire } from './wires/series.js';

/** Faults the simulated network tells in status answers only (`tasks/get` and its kin), not in events pages. */
const STATUS_ANSWER_FAULTS: readonly FaultClass[] = [
  ...MISBEHAVIOURS,
  'poll_reorder',
  'input_replay',
  'result_lost',
  'result_truncated',
];
/** After the last fault healed, every operation must settle within this much virtual time. */
export const LIVENESS_BOUND_MS = 180_000;
/** The principal the executor authenticates as. */
export const PRINCIPAL = 'alice';

/** Test-only hooks that build the deliberately broken variants (see `variants.ts`). */
export interface SeriesHooks extends DeliveryHooks {
  readonly next?: NextFn;
  readonly store?: (store: TaskStore, facts: ServerFacts) => TaskStore;
  /**
   * Called once with the series' virtual clock, which every part of the series reaches (scopes,
   * timers, the server, the clients): a test holds it weakly to prove the series is unreachable
   * after its end (flat gate memory, `test/sim/memory.test.ts`).
   */
  readonly held?: (clock: object) => void;
  /** The simulated `terminus call` re-run's node choice (default `rerun`, the CLI's own). */
  readonly rerun?: typeof rerun;
}

export interface SeriesOptions {
  readonly seed: number;
  /** Fault classes swarm series may draw from; default all. */
  readonly faults?: readonly FaultClass[];
  /** Keep the trace lines (for printing a failing series); the digest is always computed. */
  readonly keepTrace?: boolean;
  readonly backend?: StoreBackend;
  readonly hooks?: SeriesHooks;
  /** The executor listens on a `subscriptions/listen` stream (`network/push.ts`); default true. */
  readonly listen?: boolean;
  /** The wire the executor and the server speak; default the Tasks extension. */
  readonly wire?: SimWireName;
}

export interface SeriesOutcome {
  readonly seed: number;
  readonly wire: SimWireName;
  readonly plan: readonly string[];
  readonly violations: readonly Violation[];
  readonly metrics: SeriesMetrics;
  readonly faultsFired: Readonly<Partial<Record<FaultClass, number>>>;
  readonly statesReached: Readonly<Record<string, number>>;
  readonly traceDigest: string;
  readonly trace: readonly TraceEntry[];
  readonly virtualMs: number;
}

export async function runSeries(options: SeriesOptions): Promise<SeriesOutcome> {
  const { seed } = options;
  const random = seriesRandom(seed);
  const clock = new VirtualClock();
  options.hooks?.held?.(clock);
  const start = clock.now();
  const trace = new Trace(() => clock.now(), options.keepTrace ?? false);
  const facts = newServerFacts();
  const ledgerFacts = newLedgerFacts();
  const log = new WireLog();
  const fired = new Map<FaultClass, number>();
  const wire = simWire(options.wire ?? 'mcp-tasks-ext');
  const allowed = applicableFaults(wire, options.faults ?? FAULT_CLASSES);

  let ops: OperationPlan[];
  let plan;
  let drawnDeliveries = NO_DELIVERIES;
  if (isScripted(seed) && allowed.includes(scriptedClass(seed))) {
    const fault = scriptedClass(seed);
    ops = scriptedWorkload(seed);
    plan = scriptedPlan(fault, ops, sfc32(FAULT_CLASSES.indexOf(fault), 'script'));
  } else {
    ops = drawWorkload(random.workload, seed);
    plan = swarmPlan(ops, random.faults, allowed);
    // Pushes, on the wires whose executor listens (their own random stream).
    if (wire.pushes !== undefined) {
      plan.rules.push(...pushPlan(ops, sfc32(seed, 'push'), options.faults ?? PUSH_FAULT_CLASSES));
    }
    // Webhooks and event readers (their own random stream; none unless one of their classes is drawn).
    drawnDeliveries = deliveryPlan(seed, applicableFaults(wire, options.faults ?? DELIVERY_FAULT_CLASSES));
    const partitioned = plan.rules.filter((r) => r.fault === 'not_found_after_expiry').map((r) => r.op ?? '');
    ops = withEdges(ops, seed, new Set(partitioned));
  }
  ops = forWire(wire, ops);
  let client: SimClient | null = null;
  const deliveries = new SeriesDeliveries({
    seed,
    plan: drawnDeliveries,
    root: clock.root,
    trace,
    fired,
    start,
    client: () => client,
    ...(options.hooks === undefined ? {} : { hooks: options.hooks }),
  });
  const planLines = [...describePlan(plan), ...deliveries.describe().map((line) => `  ${line}`)];
  for (const line of planLines) trace.add('plan', line.trim());

  const backend = options.backend ?? (random.server.chance(0.5) ? 'sqlite' : 'memory');
  const root = clock.root;
  const byNode = new Map(ops.map((op) => [op.callNodeId, op]));
  const raced = new Set<string>();
  const instant = new Set<string>();
  let push: SimPush | null = null;
  const server = await SimServer.open({
    clock,
    random: random.server,
    trace,
    facts,
    backend,
    asyncClient: wire.name === 'sep-1391',
    ...(options.hooks?.store === undefined ? {} : { storeHook: options.hooks.store }),
    onTaskEvent: (taskId) => push?.changed(taskId),
    ...deliveries.server(),
    hooks: {
      lastStep: (op, at) => {
        const planned = byNode.get(op);
        if (planned?.raceCancel !== true || raced.has(op)) return;
        raced.add(op);
        // Same instant as the completion, or one millisecond before it (the cancel commits first and
        // the uninterruptible last step completes into a late outcome): both orders of the race.
        root.at(at - (random.faults.chance(0.5) ? 1 : 0), () => {
          fired.set('cancel_complete_race', (fired.get('cancel_complete_race') ?? 0) + 1);
          trace.add('fault', `cancel_complete_race on ${op}`);
          instant.add(op);
          void withClient((c) => cancelUntilDone(c, op));
        });
      },
    },
  });
  const ledger = recordingLedger(openSqliteLedger({ path: ':memory:' }), ledgerFacts);
  const sendViolations: Violation[] = [];
  const recordOf = (op: string | null): ToolOperation | undefined => {
    if (op === null) return undefined;
    for (const record of ledgerFacts.latest.values()) if (record.callNodeId === op) return record;
    return undefined;
  };
  const network = new SimNetwork({
    scope: root.child('net'),
    random: random.network,
    trace,
    server,
    facts,
    rules: plan.rules,
    instant,
    log,
    fired,
    wire,
    onSend: (method, op, _params) => {
      const record = recordOf(op);
      if (
        method === 'tasks/cancel' &&
        // C8: the generation was bumped and CANCEL_REQUESTED recorded before this send. The state may
        // have moved on since (a terminal status seen while the send waited for a token).
        (record === undefined ||
          record.cancelGeneration < 1 ||
          !record.history.some((h) => h.to === 'CANCEL_REQUESTED'))
      ) {
        sendViolations.push({
          invariant: 'C8',
          detail: `${op ?? '?'}: cancel sent before CANCEL_REQUESTED was recorded (ledger: ${record?.state ?? 'nothing'})`,
        });
      }
      if (method === 'tasks/get' && record?.state === 'INPUT_REQUIRED') {
        sendViolations.push({
          invariant: 'C10',
          detail: `${op ?? '?'}: polled while INPUT_REQUIRED (auto-poll must pause)`,
        });
      }
    },
  });

  push = new SimPush({
    scope: root.child('push'),
    random: sfc32(seed, 'push-net'),
    trace,
    server,
    facts,
    rules: plan.rules,
    fired,
    principal: PRINCIPAL,
  });
  const pushes = push;

  // ---- the executor process(es) ---------------------------------------------------------------
  // The real executor (`createExecutor`), stepping with a broken `next()` when a variant hands one.
  // Whether a proven never-created call is resubmitted is the executor's setting.
  // What negotiation reads from `tools/list` (T-09); negotiation itself is not faulted.
  const taskSupport = await server.taskSupport();
  let incarnation = 0;
  const pending: ((c: SimClient) => Promise<unknown>)[] = [];
  const approvalsAsked = new Set<string>();
  const resubmitNeverCreated = random.client.chance(0.7);
  // Half the series follow operations by their task's events (issue 32), half by status reads. The
  // faults told in status answers (reordered, replayed, lost or changed results, lies) are not told
  // in events pages: a series planned with one follows by status reads, so it is heard. Drawn from
  // its own stream, so the other draws of a seed are as before.
  const followEvents =
    sfc32(seed, 'follow-events').chance(0.5) && !plan.rules.some((r) => STATUS_ANSWER_FAULTS.includes(r.fault));
  const makeClient = async (): Promise<SimClient> => {
    const n = ++incarnation;
    const name = `client${n}`;
    const scope = root.child(name);
    let alive = true;
    const approve = async (callNodeId: string, key: string): Promise<unknown> => {
      const id = `${n} ${callNodeId} ${key}`;
      if (approvalsAsked.has(id)) {
        sendViolations.push({ invariant: 'C10', detail: `${callNodeId}: approval asked twice for ${key}` });
      }
      approvalsAsked.add(id);
      await scope.sleep(random.client.int(50, 1_500));
      return { action: 'accept', content: { ok: true } };
    };
    const listening =
      options.listen === false || wire.pushes === undefined ? {} : pushes.client(scope, () => alive, wire.pushes);
    // One connection per connect, as over HTTP or stdio: server requests on a connection's streams
    // reach the adapter built on it.
    const connect = () => {
      const channel = network.channel(PRINCIPAL, () => alive);
      const links = {
        channel,
        modern: network.channel(PRINCIPAL, () => alive, 'modern'),
        fetch: network.fetch(PRINCIPAL, () => alive),
        clock: scope,
        taskSupport,
        push: listening,
      };
      return wire.client?.(links) ?? createTasksExtWire({ channel, ...listening });
    };
    const ids = simIds(random.client, `c${n}.`);
    const made = await startRealClient({
      name,
      ledger,
      connect,
      scope,
      random: random.client,
      ids,
      trace,
      resubmitNeverCreated,
      followEvents,
      approve,
      ...(options.hooks?.next === undefined ? {} : { next: options.hooks.next }),
    });
    const kill = made.kill.bind(made);
    made.kill = () => {
      alive = false;
      kill();
    };
    return made;
  };
  const withClient = async (fn: (c: SimClient) => Promise<unknown>): Promise<void> => {
    if (client === null) pending.push(fn);
    else await fn(client);
  };
  /** The caller's cancel: retried while the operation has no task id yet (C8 needs one). */
  const cancelUntilDone = async (c: SimClient, op: string, tries = 0): Promise<void> => {
    const outcome = await c.cancel(op);
    if ((outcome === 'no_task_id' || outcome === 'no_operation') && tries < 60) {
      root.at(clock.now() + 500, () => void withClient((d) => cancelUntilDone(d, op, tries + 1)));
    }
  };
  client = await makeClient();
  deliveries.startReaders(ops);

  // ---- the workload -----------------------------------------------------------------------------
  const rerunOf = options.hooks?.rerun ?? rerun;
  for (const op of ops) {
    const budget = op.giveUp?.budgetMs;
    root.at(start + op.startAt, () => void withClient((c) => c.submit(op.callNodeId, op.tool, { ...op.args }, budget)));
    if (op.giveUp != null) {
      const later = op.giveUp.resumeAfter;
      root.at(start + op.startAt + later, () => void withClient((c) => c.reattach(op.callNodeId)));
    }
    if (op.cancelAfter !== null) {
      const after = op.cancelAfter;
      root.at(start + op.startAt + after, () => void withClient((c) => cancelUntilDone(c, op.callNodeId)));
    }
    if (op.rerun != null) {
      // The same `terminus call` again while it runs: the CLI's node choice, then an attach (C5).
      root.at(start + op.startAt + op.rerun.after, () => {
        void rerunOf(ledger, op).then(async (r) => {
          if (r.violation !== undefined) sendViolations.push(r.violation);
          if (r.submit !== null) await withClient((c) => c.submit(r.submit as string, op.tool, { ...op.args }));
        });
      });
    }
    if (op.disconnect !== null) {
      const d = op.disconnect;
      root.at(start + op.startAt + d.after, () => void withClient((c) => c.detach(op.callNodeId)));
      root.at(start + op.startAt + d.after + d.for, () => void withClient((c) => c.reattach(op.callNodeId)));
    }
  }

  // ---- process faults ---------------------------------------------------------------------------
  let healedAt = start + Math.max(0, ...ops.map((op) => op.startAt));
  for (const fault of plan.process) {
    const at = start + fault.at;
    healedAt = Math.max(healedAt, at + fault.duration);
    if (fault.fault === 'server_crash') {
      root.at(at, () => {
        if (!server.up) return;
        fired.set('server_crash', (fired.get('server_crash') ?? 0) + 1);
        server.crash();
        network.failServerRequests();
        root.at(at + fault.duration, () => server.start());
      });
    } else if (fault.fault === 'stale_epoch') {
      root.at(at, () => {
        if (!server.up) return;
        server.stall();
        root.at(at + fault.duration, () => {
          fired.set('stale_epoch', (fired.get('stale_epoch') ?? 0) + 1);
          server.thawStalled();
        });
      });
    } else {
      root.at(at, () => {
        if (client === null) return;
        fired.set('executor_crash', (fired.get('executor_crash') ?? 0) + 1);
        client.kill();
        client = null;
        // The server's requests waiting on the dead process's streams end with them.
        network.failServerRequests();
        root.at(at + fault.duration, () => {
          void (async () => {
            const next = await makeClient();
            await next.resume();
            // The caller retries every call it made (a duplicate submission, C5), then replays its commands.
            for (const op of ops) {
              if (clock.now() >= start + op.startAt) await next.submit(op.callNodeId, op.tool, { ...op.args });
            }
            client = next;
            deliveries.readers?.restart();
            for (const fn of pending.splice(0)) await fn(next);
          })();
        });
      });
    }
  }
  // Rules with an expiry partition keep a fault open for that long after the terminal status.
  const partition = plan.rules
    .filter((r) => r.fault === 'not_found_after_expiry')
    .reduce((m, r) => Math.max(m, r.arg), 0);

  // ---- drive virtual time ------------------------------------------------------------------------
  const quiet = { inFlight: () => server.counter.inFlight };
  const settledAll = (): boolean => {
    if (ledgerFacts.latest.size < ops.length) return false;
    for (const record of ledgerFacts.latest.values()) {
      if (!isSettled(record.state)) return false;
    }
    return true;
  };
  // The bound counts from the last fault healed: the process faults and the longest partition, or a
  // message fault that fired later (an expiry partition ends 75 s after the terminal status it
  // follows, and a drop after it costs the executor's back-off, up to 66 s: SEP-1391 seed 4401).
  const deadline = (): number => Math.max(healedAt + partition, network.faultsOverAt) + LIVENESS_BOUND_MS;
  await settle(quiet);
  for (;;) {
    if (clock.now() >= healedAt && settledAll() && pending.length === 0) break;
    const at = clock.peek();
    if (at === null || at > deadline()) break;
    clock.fireNext();
    await settle(quiet);
  }
  const endAt = clock.now();
  trace.add('sim', `end after ${endAt - start}ms`);
  // The same command once more, now that it settled: the CLI must start the next generation.
  for (const op of ops.filter((o) => o.rerun != null)) {
    const r = await rerunOf(ledger, op);
    if (r.violation !== undefined) sendViolations.push(r.violation);
  }

  const checked = await checkSeries({
    ops,
    plan,
    server,
    facts,
    ledger,
    ledgerFacts,
    log,
    principal: `auth:${PRINCIPAL}`,
    start,
    now: endAt,
    fired,
    wire,
  });
  // Webhooks and readers: virtual time runs on until the outbox and the readers are done, then their checks.
  await deliveries.drain(clock, quiet, server.outbox);
  const delivered = deliveries.check(facts);
  network.failServerRequests();
  await server.close();
  await ledger.close();
  push?.dispose();
  clock.dispose();

  const faultsFired: Partial<Record<FaultClass, number>> = {};
  for (const [fault, count] of fired) faultsFired[fault] = count;
  return {
    seed,
    wire: wire.name,
    plan: planLines,
    violations: [...sendViolations, ...checked.violations, ...delivered],
    metrics: checked.metrics,
    faultsFired,
    statesReached: Object.fromEntries(ledgerFacts.statesEntered),
    traceDigest: trace.digest(),
    trace: trace.entries,
    virtualMs: endAt - start,
  };
}
