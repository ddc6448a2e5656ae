/**
 * What the server side did, as seen just above the real store: the ground truth the checkers
 * compare the executor's receipts against. Recorded by `recordingStore`; never read by the system
 * under test.
 */
import type { TaskRecord, TaskStatus } from '../../core/task.js';

export interface StaleWrite {
  readonly taskId: string;
  readonly method: string;
  readonly epoch: number;
  readonly currentEpoch: number;
  readonly at: number;
}

export interface ServerFacts {
  /** Every task ever created, by id: its owner, submission key and the call node it serves. */
  readonly tasks: Map<string, { owner: string; key: string | null; callNode: string; createdAt: number }>;
  /** Tasks per call node, in creation order (C5: never more than one). */
  readonly tasksByCallNode: Map<string, string[]>;
  /** `${owner} ${key}` -> instant the key was burned by a never-created lookup (S6). */
  readonly burnedKeys: Map<string, number>;
  /** Creates that succeeded for a burned key (S6 violations). */
  readonly createdAfterBurn: { key: string; at: number }[];
  /** Highest claimed epoch per task. */
  readonly epochs: Map<string, number>;
  /** Fenced writes from an epoch older than the task's latest claim that nevertheless succeeded (S3). */
  readonly staleWrites: StaleWrite[];
  /** Fenced writes rejected as stale, as they should be (coverage of "old epoch callbacks"). */
  staleRejected: number;
  /** Tasks made cancelled by a client cancel that won, and when. */
  readonly cancelWon: Map<string, number>;
  /** Late outcomes kept after a won cancel (S4). */
  lateOutcomes: number;
  /** Terminal status per task as the store reported it when it became terminal. */
  readonly terminal: Map<string, { status: TaskStatus; at: number; task: TaskRecord }>;
  /** Every status the store returned for a task, in order, deduplicated on change (S2). */
  readonly statusHistory: Map<string, TaskStatus[]>;
  /** Input response keys the store holds per task, as of its last write. */
  readonly inputResponses: Map<string, Set<string>>;
}

export function newServerFacts(): ServerFacts {
  return {
    tasks: new Map(),
    tasksByCallNode: new Map(),
    burnedKeys: new Map(),
    createdAfterBurn: [],
    epochs: new Map(),
    staleWrites: [],
    staleRejected: 0,
    cancelWon: new Map(),
    lateOutcomes: 0,
    terminal: new Map(),
    statusHistory: new Map(),
    inputResponses: new Map(),
  };
}
