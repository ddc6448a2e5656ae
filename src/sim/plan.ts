/**
 * Fault plans: drawn (swarm testing: each series enables a random subset of the fault classes, so
 * rare combinations meet) or scripted (one hand-written timeline per class, on a fixed workload).
 * The seed alone decides which: every eighth seed runs a scripted timeline, so `--seed S --series 1`
 * replays either kind.
 */
import { FAULT_CLASSES, type FaultClass, type FaultPlan, type MessageRule, type ProcessFault } from './faults.js';
import type { SimRandom } from './random.js';
import { SIM_TOOL, SIM_TOOL_SHORT_TTL } from './server/tools.js';
import type { OperationPlan } from './workload.js';

/** Partition that outlasts a 5 s TTL plus the 60 s read grace of a terminal task (S7). */
const EXPIRY_PARTITION_MS = 75_000;

type Maker = (ops: OperationPlan[], r: SimRandom) => { rules: MessageRule[]; process: ProcessFault[] };

const rule = (fault: FaultClass, op: string | null, remaining: number, p = 1, arg = 0): MessageRule => ({
  fault,
  op,
  remaining,
  p,
  arg,
});

function pickOp(ops: OperationPlan[], r: SimRandom): OperationPlan {
  return r.pick(ops);
}

function ensureCancel(op: OperationPlan, r: SimRandom): void {
  if (op.cancelAfter === null && !op.raceCancel) op.cancelAfter = r.int(300, 5_000);
}

/** How each class is put into a series; used by both swarm and scripted plans. */
const MAKERS: Record<(typeof FAULT_CLASSES)[number], Maker> = {
  submit_response_lost: (ops, r) => ({
    rules: [rule('submit_response_lost', pickOp(ops, r).callNodeId, 1)],
    process: [],
  }),
  submit_request_lost: (ops, r) => ({
    rules: [rule('submit_request_lost', pickOp(ops, r).callNodeId, 1)],
    process: [],
  }),
  poll_reorder: (ops, r) => ({ rules: [rule('poll_reorder', pickOp(ops, r).callNodeId, 2, 0.5)], process: [] }),
  input_replay: (ops, r) => {
    const op = pickOp(ops, r);
    op.args.ask = true;
    return { rules: [rule('input_replay', op.callNodeId, 1)], process: [] };
  },
  cancel_complete_race: (ops, r) => {
    const op = pickOp(ops, r);
    op.raceCancel = true;
    op.cancelAfter = null;
    return { rules: [], process: [] };
  },
  cancel_ack_lost: (ops, r) => {
    const op = pickOp(ops, r);
    ensureCancel(op, r);
    return { rules: [rule('cancel_ack_lost', op.callNodeId, 1)], process: [] };
  },
  result_lost: (ops, r) => ({ rules: [rule('result_lost', pickOp(ops, r).callNodeId, r.int(1, 2))], process: [] }),
  result_truncated: (ops, r) => ({
    rules: [rule('result_truncated', pickOp(ops, r).callNodeId, r.int(1, 3))],
    process: [],
  }),
  stale_epoch: (_ops, r) => ({
    rules: [],
    process: [{ fault: 'stale_epoch', at: r.int(500, 5_000), duration: r.int(4_500, 8_000) }],
  }),
  task_id_misuse: (ops, r) => ({ rules: [rule('task_id_misuse', pickOp(ops, r).callNodeId, 1, 0.5)], process: [] }),
  not_found_before_expiry: (ops, r) => ({
    rules: [rule('not_found_before_expiry', pickOp(ops, r).callNodeId, 1, 0.5)],
    process: [],
  }),
  not_found_after_expiry: (ops, r) => {
    const op = pickOp(ops, r);
    (op as { tool: string }).tool = SIM_TOOL_SHORT_TTL;
    return { rules: [rule('not_found_after_expiry', op.callNodeId, 1, 1, EXPIRY_PARTITION_MS)], process: [] };
  },
  poll_429: (ops, r) => ({
    rules: [rule('poll_429', pickOp(ops, r).callNodeId, r.int(1, 3), 0.5, r.int(500, 3_000))],
    process: [],
  }),
  poll_503: (ops, r) => ({
    rules: [rule('poll_503', pickOp(ops, r).callNodeId, r.int(1, 3), 0.5, r.chance(0.5) ? r.int(500, 3_000) : 0)],
    process: [],
  }),
  server_crash: (_ops, r) => ({
    rules: [],
    process: [{ fault: 'server_crash', at: r.int(200, 8_000), duration: r.int(100, 3_000) }],
  }),
  executor_crash: (_ops, r) => ({
    rules: [],
    process: [{ fault: 'executor_crash', at: r.int(100, 8_000), duration: r.int(50, 3_000) }],
  }),
  duplicate: (_ops, r) => ({ rules: [rule('duplicate', null, r.int(1, 4), 0.15)], process: [] }),
  drop: (_ops, r) => ({ rules: [rule('drop', null, r.int(1, 3), 0.05)], process: [] }),
  terminal_rewritten: (ops, r) => ({ rules: [rule('terminal_rewritten', pickOp(ops, r).callNodeId, 1)], process: [] }),
  result_changed: (ops, r) => {
    const op = pickOp(ops, r);
    // A failing call has no result to change.
    op.args.fail = false;
    return { rules: [rule('result_changed', op.callNodeId, 1)], process: [] };
  },
  terminal_reverted: (ops, r) => ({
    rules: [rule('terminal_reverted', pickOp(ops, r).callNodeId, 1, 1, r.int(1, 2))],
    process: [],
  }),
  late_completion_shown: (ops, r) => {
    // Every read of the operation is held until its cancel: one is on the wire when the cancel wins.
    const op = pickOp(ops, r);
    ensureCancel(op, r);
    return { rules: [rule('late_completion_shown', op.callNodeId, 30)], process: [] };
  },
};

/** Every eighth seed is scripted. */
export function isScripted(seed: number): boolean {
  return seed % 8 === 0;
}

export function scriptedClass(seed: number): (typeof FAULT_CLASSES)[number] {
  return FAULT_CLASSES[Math.floor(seed / 8) % FAULT_CLASSES.length] as (typeof FAULT_CLASSES)[number];
}

/**
 * The fixed workload of scripted timelines: a plain call and one that asks for input, long enough
 * (4-6 s) that the timed faults land while they run.
 */
export function scriptedWorkload(seed: number): OperationPlan[] {
  const base = (i: number, steps: number, stepMs: number, ask: boolean): OperationPlan => ({
    callNodeId: `s${seed}-op${i}`,
    tool: SIM_TOOL,
    args: { op: `s${seed}-op${i}`, steps, stepMs, ask, fail: false, size: 512 },
    startAt: i * 300,
    cancelAfter: null,
    disconnect: null,
    raceCancel: false,
  });
  return [base(0, 4, 1_000, false), base(1, 3, 2_000, true)];
}

/**
 * The scripted timeline of `fault` on the fixed workload: its faults are drawn from a stream seeded
 * by the class alone, so every seed scripted with this class replays the identical timeline.
 */
export function scriptedPlan(fault: (typeof FAULT_CLASSES)[number], ops: OperationPlan[], r: SimRandom): FaultPlan {
  const made = MAKERS[fault](ops, r);
  const rules = made.rules.map((x) => ({ ...x, p: 1 }));
  return { name: `scripted:${fault}`, rules, process: made.process };
}

/** Swarm: each class on with probability 0.35 (restricted to `allowed`), then drawn as above. */
export function swarmPlan(ops: OperationPlan[], r: SimRandom, allowed: readonly FaultClass[]): FaultPlan {
  const rules: MessageRule[] = [];
  const process: ProcessFault[] = [];
  for (const fault of FAULT_CLASSES) {
    if (!allowed.includes(fault) || !r.chance(0.35)) continue;
    const made = MAKERS[fault](ops, r);
    rules.push(...made.rules);
    process.push(...made.process);
  }
  return { name: 'swarm', rules, process };
}

export { SIM_TOOL };
