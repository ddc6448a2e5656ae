import type { Logger } from '../core/ports.js';
import type { LifecycleEvent, TaskObserver } from '../runner/observer.js';

/** Options of `lifecycleLog`. */
export interface LifecycleLogOptions {
  /** Where the lines go; every task event is one `info` entry. */
  readonly logger: Logger;
  /** Include argument, result and error-message values. Off by default: they may hold personal data. */
  readonly payloads?: boolean;
}

/**
 * Lifecycle logs: one `info` entry per task event, with the facts an operator asks for (tool, wire,
 * owner at creation; node and epoch at a claim; how a run ended and how long it took). Claim passes
 * are not logged (one every 250 ms by default); they feed metrics and readiness.
 * @example
 * const engine = createEngine({ store, tools, clock, ids, logger, observer: lifecycleLog({ logger }) });
 * // {"time":"...","level":"info","msg":"task created","event":"created","taskId":"...","tool":"report",...}
 */
export function lifecycleLog(options: LifecycleLogOptions): TaskObserver {
  const { logger } = options;
  const payloads = options.payloads ?? false;
  return {
    observe(event) {
      const line = describe(event, payloads);
      if (line !== null) logger.info(line.message, { event: event.kind, ...line.fields });
    },
  };
}

function describe(
  event: LifecycleEvent,
  payloads: boolean,
): { message: string; fields: Record<string, unknown> } | null {
  switch (event.kind) {
    case 'created': {
      const { taskId, tool, wire, owner, args } = event;
      return { message: 'task created', fields: { taskId, tool, wire, owner, ...(payloads ? { args } : {}) } };
    }
    case 'claimed': {
      const { taskId, tool, node, epoch, previousNode } = event;
      if (epoch > 1) {
        // The store hands a task out again once the previous claim's lease ran out (its node died
        // or stalled: the claim names that node) or was given back at a shutdown (no owner left).
        const fields = { taskId, tool, node, epoch, previousEpoch: epoch - 1 };
        if (previousNode === null) return { message: 'task re-claimed after a release', fields };
        return { message: 'task re-claimed after a lease expired', fields: { ...fields, previousNode } };
      }
      return {
        message: 'task claimed',
        fields: { taskId, tool, node, epoch, queueWaitMs: event.at - event.createdAt },
      };
    }
    case 'claim_pass':
      return null;
    case 'log_dropped':
      // One per batch while a handler floods its log: counted in metrics, shown in the task log.
      return null;
    case 'input_requested': {
      const { taskId, tool, node, epoch, key } = event;
      return { message: 'task input requested', fields: { taskId, tool, node, epoch, key } };
    }
    case 'input_answered': {
      const { taskId, tool, keys, status } = event;
      return { message: 'task input answered', fields: { taskId, tool, keys, status } };
    }
    case 'cancel_requested': {
      const { taskId, tool, outcome, status } = event;
      const message = outcome === 'won' ? 'task cancel requested: won' : 'task cancel requested: lost';
      return { message, fields: { taskId, tool, outcome, status } };
    }
    case 'run_ended': {
      const { taskId, tool, node, epoch, runMs, outcome } = event;
      const fields: Record<string, unknown> = { taskId, tool, node, epoch, runMs, outcome };
      if (event.error !== undefined) {
        fields['errorCode'] = event.error.code;
        if (payloads) fields['error'] = event.error.message;
      }
      if (payloads && event.result !== undefined) fields['result'] = event.result;
      return { message: RUN_MESSAGES[outcome], fields };
    }
    case 'expired':
      return { message: 'tasks expired', fields: { count: event.count } };
  }
}

const RUN_MESSAGES = {
  completed: 'task completed',
  failed: 'task failed',
  late: 'task run finished after its cancel won; kept as lateOutcome',
  cancelled: 'task run stopped: cancelled',
  shutdown: 'task run released for a re-run: node shutting down',
  lease_lost: 'task run dropped: lease lost',
  crashed: 'task run lost: its handler worker died; released for a re-run',
  abandoned: 'task run given up: its handler ignored its aborted signal; its lease is left to lapse',
} as const;

/** `json`: one JSON object a line; `text`: `time level message key=value ...`. */
export const LOG_FORMATS = ['json', 'text'] as const;
/** `json` or `text`. */
export type LogFormat = (typeof LOG_FORMATS)[number];

/** Options of `lineLogger`. */
export interface LineLoggerOptions {
  readonly format: LogFormat;
  /** Writes one line (with its newline). */
  readonly write: (line: string) => void;
  /** Emit `debug` entries too. */
  readonly debug?: boolean;
  /** The time stamp of an entry; the CLI passes the wall clock. */
  readonly now: () => number;
}

/**
 * A `Logger` that writes one line per entry, as JSON (`{"time","level","msg",...fields}`) or text
 * (`time level msg key=value`, values JSON-encoded when they are not plain words).
 * @example
 * const logger = lineLogger({ format: 'json', now: () => Date.now(), write: (line) => process.stderr.write(line) });
 * logger.info('task created', { taskId: 't-1' });
 * // {"time":"2026-01-01T00:00:00.000Z","level":"info","msg":"task created","taskId":"t-1"}
 */
export function lineLogger(options: LineLoggerOptions): Logger {
  const entry = (level: string, message: string, fields: Record<string, unknown> = {}): void => {
    const time = new Date(options.now()).toISOString();
    if (options.format === 'json') {
      options.write(`${JSON.stringify({ time, level, msg: message, ...fields })}\n`);
      return;
    }
    const pairs = Object.entries(fields).map(([key, value]) => `${key}=${textValue(value)}`);
    options.write(`${[time, level, message, ...pairs].join(' ')}\n`);
  };
  return {
    debug: (m, f) => {
      if (options.debug === true) entry('debug', m, f);
    },
    info: (m, f) => entry('info', m, f),
    warn: (m, f) => entry('warn', m, f),
    error: (m, f) => entry('error', m, f),
  };
}

function textValue(value: unknown): string {
  if (typeof value === 'string' && /^[\w.:/@+-]+$/.test(value)) return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(value) ?? 'undefined';
}
