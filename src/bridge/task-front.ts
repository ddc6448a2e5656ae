/**
 * The bridge's native task front, wire-neutral: a host that speaks tasks (the 2026-07-28 Tasks
 * extension, or 2025-11-25 tasks) gets each call as a task of the bridge's own. The task id is the
 * ledger operation's id (random, owner-checked, never the upstream's), so a task made through this
 * front and a facade call of the same tool and arguments are one operation (`BridgeOperations.start`):
 * never two. Each operation is shown as a `TaskRecord`, so the wires' own codecs encode it.
 */
import { taskNotFound as notFound, TerminusError } from '../core/errors.js';
import { isTerminal, type TaskRecord, type TaskStatus } from '../core/task.js';
import type { Receipt } from '../executor/ledger-port.js';
import { DEFAULT_POLICY, type ToolOperation } from '../executor/operation.js';
import { isSettled } from '../executor/transitions.js';
import type { CatalogEntry } from './catalog.js';
import { endOf, endText } from './end-states.js';
import type { BridgeOperations } from './operations.js';
import { questionKey } from './questions.js';
import { DEFAULT_MAX_POLL_INTERVAL_MS, DurationEstimates, suggestPollInterval } from '../runner/poll-interval.js';

/**
 * Which front a host gets:
 * - `auto` (default): native tasks to a host that declares them (the Tasks extension on a request,
 *   or the `tasks` capability in a 2025-11-25 `initialize`), the tool facade to the rest;
 * - `tasks`: also lists `execution.taskSupport` to a 2025-11-25 host that declared no `tasks`
 *   capability (that capability is about requests a server sends; some hosts send task calls without it);
 * - `facade`: the tool facade to every host (a host whose task UI hides the work).
 */
export const FRONTS = ['auto', 'tasks', 'facade'] as const;
export type Front = (typeof FRONTS)[number];

/**
 * The shortest poll interval the bridge suggests (ms): the executor's own floor between status
 * reads of an operation (C6), since a host polling faster could only see the same state again.
 */
export const MIN_BRIDGE_POLL_INTERVAL_MS = DEFAULT_POLICY.minPollIntervalMs;

/** Default longest `task.ttl` a 2025-11-25 host is granted (ms): one day (T-80). */
export const DEFAULT_MAX_TASK_TTL_MS = 86_400_000;

/** How the task front paces and keeps tasks. */
export interface TaskFrontOptions {
  /** Cap of the suggested poll interval (ms); default `DEFAULT_MAX_POLL_INTERVAL_MS` (30 s). */
  readonly maxPollIntervalMs?: number;
  /** Cap of a granted `task.ttl` (ms); default `DEFAULT_MAX_TASK_TTL_MS`. */
  readonly maxTaskTtlMs?: number;
}

/** Longest a task id can be here (`op_` + a UUID); anything longer is answered "not found" unread. */
const MAX_ID_LENGTH = 64;

/** A created task: its record, and whether this request started it (false: attached to one in flight). */
export interface CreatedTask {
  readonly task: TaskRecord;
  readonly created: boolean;
}

export class TaskFront {
  /** How long each bridged tool's calls took here: the poll interval adapts to it (issue 32). */
  private readonly durations = new DurationEstimates();
  readonly maxPollIntervalMs: number;
  readonly maxTaskTtlMs: number;

  constructor(
    private readonly operations: BridgeOperations,
    options: TaskFrontOptions = {},
  ) {
    this.maxPollIntervalMs = Math.max(
      MIN_BRIDGE_POLL_INTERVAL_MS,
      options.maxPollIntervalMs ?? DEFAULT_MAX_POLL_INTERVAL_MS,
    );
    this.maxTaskTtlMs = options.maxTaskTtlMs ?? DEFAULT_MAX_TASK_TTL_MS;
    // Every operation that ended with the tool's own outcome says how long the tool takes.
    operations.onEnded((op, receipt) => {
      if (receipt === null || (receipt.status !== 'completed' && receipt.status !== 'failed')) return;
      this.durations.observe(toolKey(op), op.updatedAt - op.createdAt, receipt.status);
    });
  }

  /** The ttl granted for a requested one: capped by `maxTaskTtlMs`; none requested, none granted (null). */
  grantTtl(requestedMs: number | null | undefined): number | null {
    if (requestedMs === undefined || requestedMs === null) return null;
    return Math.min(Math.max(1, requestedMs), this.maxTaskTtlMs);
  }

  /**
   * A host's `tools/call` as a task: the caller's operation in flight for the same call, or a new
   * one (never twice, whichever front started it). Resolves once the ledger holds it. `ttlMs` (a
   * 2025-11-25 host's `task.ttl`, granted) is kept with a new operation; one attached to keeps its own.
   */
  async create(
    entry: CatalogEntry,
    args: Record<string, unknown>,
    owner: string,
    ttlMs: number | null = null,
  ): Promise<CreatedTask | null> {
    const started = await this.operations.start(entry, args, owner, ttlMs);
    if (started.kind === 'refused') return null;
    const op = await this.operations.deps.ledger.load(started.handle.operationId);
    if (op === null) throw notFound();
    return { task: await this.recordOf(op), created: !started.attached };
  }

  /** The caller's task by id; unknown, foreign and malformed ids are one `not_found` (S8). */
  async get(owner: string, taskId: string): Promise<TaskRecord> {
    return this.recordOf(await this.own(owner, taskId));
  }

  /** The caller's tasks: open ones, then the most recent settled ones. */
  async list(owner: string, recent = 50): Promise<TaskRecord[]> {
    const { open, settled } = await this.operations.book.list(owner, recent);
    const kept = [...open, ...settled].filter((op) => !this.expired(op));
    return Promise.all(kept.map((op) => this.recordOf(op)));
  }

  /**
   * Cancel as a request (C8): the ledger records CANCEL_REQUESTED before the upstream's cancel is
   * sent. Returns the task as it stands after the request; a terminal task is returned unchanged.
   */
  async cancel(owner: string, taskId: string): Promise<{ task: TaskRecord; wasTerminal: boolean }> {
    const op = await this.own(owner, taskId);
    const before = await this.recordOf(op);
    if (isTerminal(before.status)) return { task: before, wasTerminal: true };
    const handle = await this.operations.reach(op);
    if (handle !== null && !('content' in handle)) await handle.cancel();
    return { task: await this.get(owner, taskId), wasTerminal: false };
  }

  /** Answers the task's open questions from a host's `inputResponses` (keys as `questionKey` names them). */
  async respond(owner: string, taskId: string, responses: Readonly<Record<string, unknown>>): Promise<void> {
    const op = await this.own(owner, taskId);
    const { questions } = this.operations.deps;
    for (const q of questions.pending(op.id)) {
      const reply = responses[questionKey(q)];
      if (reply !== undefined) questions.answer(q, reply);
    }
  }

  /**
   * Waits until the task is terminal (or `signal` aborts), then returns it. With `elicit` (a host
   * that can be asked now) the upstream's questions are put to the host as they come; without it,
   * an open question ends the wait (the task is returned `input_required`).
   */
  async settled(
    owner: string,
    taskId: string,
    signal: AbortSignal,
    elicit?: (params: Record<string, unknown>) => Promise<unknown>,
  ): Promise<TaskRecord> {
    for (;;) {
      const op = await this.own(owner, taskId);
      const task = await this.recordOf(op);
      if (isTerminal(task.status) || (task.status === 'input_required' && elicit === undefined)) return task;
      const handle = await this.operations.reach(op);
      if (handle === null || 'content' in handle) return this.get(owner, taskId);
      const { inlineWaitMs } = this.operations.deps;
      const caller = { owner, signal, ...(elicit === undefined ? {} : { elicit }) };
      await this.operations.settle(handle, caller, inlineWaitMs, elicit === undefined);
      if (signal.aborted) throw new TerminusError('unavailable', 'the request was cancelled');
    }
  }

  /**
   * The caller's operation behind a task id. Past its granted ttl the front forgets the task (T-36:
   * "not found"), while the ledger keeps the operation and its receipt for `terminus_wait` and `ops`.
   */
  private async own(owner: string, taskId: string): Promise<ToolOperation> {
    if (taskId.length === 0 || taskId.length > MAX_ID_LENGTH) throw notFound();
    const op = await this.operations.book.own(owner, taskId);
    if (op === null) throw notFound();
    if (this.expired(op)) throw notFound();
    return op;
  }

  /** Whether the task's granted ttl has passed (counted from its creation, T-36). */
  private expired(op: ToolOperation): boolean {
    const ttl = this.operations.book.ttlOf(op.callNodeId);
    return ttl !== null && this.operations.deps.clock.now() >= op.createdAt + ttl;
  }

  /** The operation as a task of this bridge. */
  async recordOf(op: ToolOperation): Promise<TaskRecord> {
    const { ledger, questions } = this.operations.deps;
    const receipt = await ledger.getReceipt(op.callNodeId);
    const view = await this.operations.view(op, receipt);
    const shown = statusOf(op, receipt);
    const pending = questions.pending(op.id);
    const latest = this.operations.latest(op);
    const progress = latest?.progress ?? op.progress ?? null;
    // The upstream's own status message, unless it only repeats its progress message: then the wire
    // codec words the progress with its counts ("2/5: step").
    const said = latest?.statusMessage ?? null;
    let statusMessage = progress !== null && (said === null || said === progress.message) ? null : said;
    if (shown.status === 'failed' && shown.error !== null) statusMessage = shown.error.message;
    if (op.state === 'CANCEL_REQUESTED' && statusMessage === null) statusMessage = 'cancel requested';
    const end = endOf(op.state);
    if (end !== null) statusMessage = endText(end, { op, tool: view.tool, receipt }).split('\n')[0] ?? null;
    const status: TaskStatus = pending.length > 0 && shown.status === 'working' ? 'input_required' : shown.status;
    return {
      id: op.id,
      owner: '',
      tool: view.tool,
      args: {},
      requestDigest: op.requestDigest,
      submissionKey: null,
      wire: 'mcp-tasks-ext',
      status,
      statusMessage,
      progress: progress === null ? null : { ...progress },
      createdAt: op.createdAt,
      updatedAt: op.updatedAt,
      ttlMs: this.operations.book.ttlOf(op.callNodeId),
      pollIntervalMs: this.pollIntervalOf(op, status),
      keepAliveMs: null,
      terminalAt: isTerminal(shown.status) ? op.updatedAt : null,
      leaseOwner: null,
      leaseExpiresAt: null,
      epoch: 0,
      cancelRequested: op.state === 'CANCEL_REQUESTED',
      checkpoint: null,
      inputRequests: Object.fromEntries(
        pending.map((q) => [questionKey(q), { method: 'elicitation/create', params: { ...q.params } }]),
      ),
      inputResponses: {},
      result: shown.result,
      error: shown.error,
      resultDigest: receipt?.resultDigest ?? null,
      lateOutcome: null,
      eventSeq: 0,
    };
  }

  /**
   * The poll interval a task suggests, as our server's (`suggestPollInterval`): from how long its
   * tool's calls took through this bridge and how long it has run; between the executor's own
   * floor (C6) and `maxPollIntervalMs`.
   */
  pollIntervalOf(op: ToolOperation, status: TaskStatus): number {
    const floor = { status, createdAt: op.createdAt, pollIntervalMs: MIN_BRIDGE_POLL_INTERVAL_MS };
    const now = this.operations.deps.clock.now();
    return suggestPollInterval(floor, now, this.durations.estimate(toolKey(op)), this.maxPollIntervalMs);
  }
}

/** The estimate key of an operation's tool: upstream and tool (two upstreams may share a tool name). */
const toolKey = (op: ToolOperation): string => `${op.server ?? ''}\u0000${op.tool.name}`;

interface Shown {
  readonly status: TaskStatus;
  readonly result: Record<string, unknown> | null;
  readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } | null;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** The task status of an operation: its receipt's outcome, an end without a result (failed), or working. */
function statusOf(op: ToolOperation, receipt: Receipt | null): Shown {
  if (receipt !== null) {
    if (receipt.status === 'completed' && isRecord(receipt.payload)) {
      return { status: 'completed', result: receipt.payload, error: null };
    }
    if (receipt.status === 'cancelled') return { status: 'cancelled', result: null, error: null };
    const payload = isRecord(receipt.payload) ? receipt.payload : {};
    const message =
      receipt.status === 'failed'
        ? typeof payload.message === 'string'
          ? payload.message
          : 'the upstream task failed'
        : 'the upstream task expired before its result was read';
    const code = typeof payload.code === 'number' ? payload.code : -32603;
    return {
      status: 'failed',
      result: null,
      error: { code, message, ...(payload.data === undefined ? {} : { data: payload.data }) },
    };
  }
  if (endOf(op.state) !== null || isSettled(op.state)) {
    return { status: 'failed', result: null, error: { code: -32603, message: `ended without a result (${op.state})` } };
  }
  return { status: 'working', result: null, error: null };
}
