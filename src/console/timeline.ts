import type { TaskRecord } from '../core/task.js';
import type { LifecycleEvent, TaskObserver } from '../runner/observer.js';

/** One line of a task's timeline. */
export interface TimelineEntry {
  readonly at: number | null;
  readonly text: string;
}

/** Keeps the last lifecycle events per task that this node saw, for the console's timeline. */
export interface TimelineRecorder {
  readonly observer: TaskObserver;
  events(taskId: string): readonly LifecycleEvent[];
}

/**
 * In memory and bounded: 2,000 tasks x 40 events (the oldest task is dropped first), about 1 MB.
 * What happened before this process started comes from the task record itself (`timelineOf`).
 */
export function timelineRecorder(
  limits: { readonly tasks?: number; readonly perTask?: number } = {},
): TimelineRecorder {
  const maxTasks = limits.tasks ?? 2000;
  const perTask = limits.perTask ?? 40;
  const byTask = new Map<string, LifecycleEvent[]>();
  return {
    observer: {
      observe(event) {
        if (!('taskId' in event)) return;
        let list = byTask.get(event.taskId);
        if (list === undefined) {
          list = [];
          byTask.set(event.taskId, list);
          if (byTask.size > maxTasks) byTask.delete(byTask.keys().next().value as string);
        }
        list.push(event);
        if (list.length > perTask) list.shift();
      },
    },
    events: (taskId) => byTask.get(taskId) ?? [],
  };
}

/**
 * A task's timeline: what the durable record proves (creation, every epoch, input rounds, cancel,
 * outcome, a late outcome), then what this node saw happen (claims with their node, run ends),
 * in time order. Epochs before the current one ended without an outcome: their claim was lost to
 * a dead or stopped node and the task was claimed again.
 */
export function timelineOf(task: TaskRecord, seen: readonly LifecycleEvent[]): TimelineEntry[] {
  const entries: TimelineEntry[] = [
    { at: task.createdAt, text: `created on wire ${task.wire} for tool ${task.tool} (owner ${task.owner})` },
  ];
  const claimsSeen = new Set(seen.filter((e) => e.kind === 'claimed').map((e) => e.epoch));
  for (let epoch = 1; epoch < task.epoch; epoch++) {
    if (!claimsSeen.has(epoch)) {
      entries.push({
        at: null,
        text: `epoch ${epoch}: ran and ended without an outcome (its lease expired or was released); claimed again`,
      });
    }
  }
  if (task.epoch > 0 && !claimsSeen.has(task.epoch)) {
    const holder = task.leaseOwner === null ? '' : ` on node ${task.leaseOwner}`;
    entries.push({ at: null, text: `epoch ${task.epoch}: claimed${holder}` });
  }
  // Answers this node did not see (given before it started) have no time of their own in the record:
  // they go after the claims, before what this node saw, never after the outcome they led to.
  const answersSeen = new Set(seen.flatMap((e) => (e.kind === 'input_answered' ? e.keys : [])));
  for (const key of Object.keys(task.inputResponses)) {
    if (!answersSeen.has(key)) entries.push({ at: null, text: `input ${key} answered` });
  }
  for (const event of seen) {
    const text = describe(event);
    if (text !== null) entries.push({ at: event.at, text });
  }
  if (task.progress !== null) {
    const { done, total, message } = task.progress;
    entries.push({
      at: task.updatedAt,
      text: `progress ${done}${total === undefined ? '' : ` of ${total}`}${message === undefined ? '' : `: ${message}`}`,
    });
  }
  for (const key of Object.keys(task.inputRequests)) {
    if (!Object.hasOwn(task.inputResponses, key))
      entries.push({ at: null, text: `input ${key} requested, waiting for an answer` });
  }
  if (task.terminalAt !== null) {
    const how = task.status === 'cancelled' ? 'cancelled' : `${task.status} at epoch ${task.epoch}`;
    entries.push({ at: task.terminalAt, text: how });
  }
  if (task.lateOutcome !== null) {
    entries.push({
      at: task.lateOutcome.at,
      text: `epoch ${task.lateOutcome.epoch} finished after the cancel; kept as a late outcome`,
    });
  }
  // An entry without its own time (the record keeps none for it) stays after the entry before it.
  let last = task.createdAt;
  const timed = entries.map((entry) => ({ entry, key: (last = entry.at ?? last) }));
  return timed.sort((a, b) => a.key - b.key).map(({ entry }) => entry);
}

function describe(event: LifecycleEvent): string | null {
  switch (event.kind) {
    case 'claimed':
      if (event.epoch === 1) return `epoch ${event.epoch}: claimed on node ${event.node}`;
      return event.previousNode === null
        ? `epoch ${event.epoch}: re-claimed on node ${event.node} after epoch ${event.epoch - 1} was released`
        : `epoch ${event.epoch}: re-claimed on node ${event.node} after node ${event.previousNode}'s lease (epoch ${event.epoch - 1}) expired`;
    case 'run_ended':
      return `epoch ${event.epoch} on node ${event.node}: run ended (${event.outcome}) after ${event.runMs} ms`;
    case 'cancel_requested':
      return `cancel requested: ${event.outcome === 'won' ? 'won' : `lost (already ${event.status})`}`;
    case 'input_requested':
      return `epoch ${event.epoch}: input ${event.key} requested`;
    case 'input_answered':
      return `input ${event.keys.join(', ')} answered`;
    default:
      return null;
  }
}
