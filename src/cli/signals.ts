import type { Logger } from '../core/ports.js';

/**
 * SIGINT or SIGTERM runs `shutdown` once (its steps in order: stop serving, stop the runner, close
 * the store), then exits 0, or 1 if a step failed; a second signal exits 1 at once.
 */
export function exitOnSignals(logger: Logger, stopping: string, shutdown: () => Promise<void>): void {
  let started = false;
  const stop = (signal: string): void => {
    if (started) {
      logger.warn(`second ${signal}: exiting now`);
      process.exit(1);
    }
    started = true;
    logger.info(`${signal}: stopping (${stopping})`);
    shutdown().then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error('shutdown failed', { error: String(error) });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}
