import type { Logger } from '../core/ports.js';

/** A logger that adds `fields` (e.g. taskId, epoch) to every entry. */
export function withFields(logger: Logger, fields: Record<string, unknown>): Logger {
  return {
    debug: (message, extra) => logger.debug(message, { ...fields, ...extra }),
    info: (message, extra) => logger.info(message, { ...fields, ...extra }),
    warn: (message, extra) => logger.warn(message, { ...fields, ...extra }),
    error: (message, extra) => logger.error(message, { ...fields, ...extra }),
  };
}

export function errorFields(error: unknown): Record<string, unknown> {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return code === undefined ? { error: error.message } : { error: error.message, code };
  }
  return { error: String(error) };
}

/**
 * Logs a handler's exception with the run's fields (taskId, epoch, tool): a `ToolRpcError` is the
 * handler's chosen outcome (warn), anything else a crash (error, with its stack), which the task
 * only shows as a tool error text.
 */
export function logHandlerError(logger: Logger, error: unknown): void {
  if (error instanceof Error && error.name === 'ToolRpcError') {
    logger.warn('tool handler ended the task with a JSON-RPC error', errorFields(error));
    return;
  }
  const stack = error instanceof Error && error.stack !== undefined ? { stack: error.stack } : {};
  logger.error('tool handler threw', { ...errorFields(error), ...stack });
}
