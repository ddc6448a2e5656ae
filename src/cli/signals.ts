import type { Logger } from '../core/ports.js';

/**
 * SIGINT or SIGTERM runs `shutdown` once (its steps in order: stop serving, stop the runner, close
 * the store), then exits 0, or 1 if a step failed; a second signal exits 1 at once. The returned
 * function starts the same shutdown for another cause (a stdio client closing stdin), named in the
 * log line; the signal a host sends after closing stdin (the SDKs send SIGTERM 2 s later) then
 * counts as the first, so it lets that shutdown finish.
 */
export function exitOnSignals(
  logger: Logger,
  stopping: string,
  shutdown: () => Promise<void>,
): (cause: string) => void {
  let started = false;
  let signals = 0;
  const begin = (cause: string): void => {
    started = true;
    logger.info(`${cause}: stopping (${stopping})`);
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  const signal = (name: string): void => {
    signals += 1;
    if (!started) return begin(name);
    if (signals === 1) return logger.info(`${name}: already stopping`);
    logger.warn(`second ${name}: exiting now`);
    process.exit(1);
  };
  process.on('SIGINT', () => signal('SIGINT'));
  process.on('SIGTERM', () => signal('SIGTERM'));
  return (cause) => {
    if (!started) begin(cause);
  };
}
