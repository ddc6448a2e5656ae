import { eventsMeta } from '../../task-events.js';
import type { Server } from '@modelcontextprotocol/server';
import type { Logger } from '../../../core/ports.js';
import { isTerminal, type TaskRecord, type TaskStatus } from '../../../core/task.js';
import type { TaskEngine } from '../../../runner/engine-port.js';
import { encodeLogLine, LOGS_NOTIFICATION } from '../../task-logs.js';
import { encodeTask, projectStatus } from './encode.js';
import type { FollowOptions, SessionHooks } from './session-hooks.js';

interface Followed {
  readonly owner: string;
  readonly progressToken: string | number | undefined;
  readonly options: FollowOptions;
  lastStatus: TaskStatus;
  /** The last progress sent, as JSON: a status change alone sends no progress. */
  lastProgress: string;
  /** The last log seq pushed: lines go out once each, in seq order. */
  logCursor: number;
  /** Serialises pushes per task, so notifications leave in the order of the changes. */
  chain: Promise<void>;
}

/** Lines per `notifications/terminus/tasks/logs`: the read limit, so one read makes one push. */
const LOG_PUSH_LINES = 1000;

/**
 * `listening` says whether the session has a stream for notifications open now (the GET stream):
 * without one the transport drops every push, so none is read or built (a session whose client
 * only polls costs no reads per task); a task that ends meanwhile is let go.
 *
 * Pushes `notifications/tasks/status` (full `Task`, no related-task `_meta`; T-47, T-49) and
 * `notifications/progress` with the call's original `progressToken` (T-54) for the tasks created on
 * one session, until each is terminal (T-55). Sent without a related request, so they travel on the
 * session's GET stream when the client opened one (reference 1.11 lets clients expect them on any
 * stream, T-31). Advisory: clients keep polling `tasks/get` (T-48); a lost push is never repaired.
 * New lines of such a task's own log go out as `notifications/terminus/tasks/logs`
 * `{ taskId, lines }` (issue 18), each line once, in seq order, before the terminal status; a
 * client still reads `terminus/tasks/logs` by cursor and uses pushes only to learn of lines sooner.
 */
export function createStatusNotifier(
  server: Server,
  engine: TaskEngine,
  logger: Logger,
  listening: () => boolean = () => true,
): SessionHooks & { close(): void } {
  const followed = new Map<string, Followed>();
  const schedule = (taskId: string, entry: Followed, logsOnly = false): void => {
    entry.chain = entry.chain
      .then(() => (!listening() ? settle(taskId, entry) : logsOnly ? pushLogs(taskId, entry) : push(taskId, entry)))
      .catch((error: unknown) => {
        logger.debug('task notification not sent', { taskId, error: String(error) });
      });
  };
  const unsubscribe = engine.events.subscribe((event) => {
    const entry = followed.get(event.taskId);
    if (entry === undefined) return;
    // Nobody listens: a push would be dropped unsent, so nothing is read; an ended task is let go.
    if (!listening()) {
      if (event.kind === 'terminal' || event.kind === 'cancelled') followed.delete(event.taskId);
      return;
    }
    // A log line changes no status: read only the new lines.
    schedule(event.taskId, entry, event.kind === 'log');
  });

  /** Without a listener: only whether the task has ended already (then it is not followed on). */
  async function settle(taskId: string, entry: Followed): Promise<void> {
    const task = await engine.get(entry.owner, taskId);
    if (isTerminal(task.status)) followed.delete(taskId);
  }

  async function pushLogs(taskId: string, entry: Followed): Promise<void> {
    for (;;) {
      const page = await engine.readLog(entry.owner, taskId, { after: entry.logCursor, limit: LOG_PUSH_LINES });
      if (page.lines.length === 0) return;
      entry.logCursor = page.next;
      await server.notification({
        method: LOGS_NOTIFICATION,
        // The call's extra params too: the related-task `_meta` (2025), `_operation` (SEP-1391).
        params: { taskId, lines: page.lines.map(encodeLogLine), ...entry.options.progressParams },
      });
      if (page.lines.length < LOG_PUSH_LINES) return;
    }
  }

  async function push(taskId: string, entry: Followed): Promise<void> {
    // Lines first: a terminal task takes no more, so these are its last ones.
    await pushLogs(taskId, entry);
    const task = await engine.get(entry.owner, taskId);
    const status = projectStatus(task);
    if (
      entry.progressToken !== undefined &&
      task.progress !== null &&
      !isTerminal(task.status) &&
      JSON.stringify(task.progress) !== entry.lastProgress
    ) {
      entry.lastProgress = JSON.stringify(task.progress);
      const { done, total, message } = task.progress;
      await server.notification({
        method: 'notifications/progress',
        params: {
          progressToken: entry.progressToken,
          progress: done,
          ...(total === undefined ? {} : { total }),
          ...(message === undefined ? {} : { message }),
          ...entry.options.progressParams,
        },
      });
    }
    if (status !== entry.lastStatus && entry.options.statusNotifications !== false) {
      entry.lastStatus = status;
      await server.notification({
        method: 'notifications/tasks/status',
        params: { ...encodeTask(task), _meta: eventsMeta(task) },
      });
    }
    if (isTerminal(task.status)) followed.delete(taskId);
  }

  return {
    taskCreated(task: TaskRecord, progressToken, options = {}) {
      const entry: Followed = {
        owner: task.owner,
        progressToken,
        options,
        lastStatus: projectStatus(task),
        lastProgress: JSON.stringify(task.progress),
        logCursor: 0,
        chain: Promise.resolve(),
      };
      followed.set(task.id, entry);
      // Catches up with changes made between the commit and now (the runner may be that fast).
      schedule(task.id, entry);
    },
    close() {
      unsubscribe();
      followed.clear();
    },
  };
}
