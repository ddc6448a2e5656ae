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
