import type { Logger } from '../core/ports.js';

/** A level of `stderrLogger`; it writes its level and the more severe ones after it. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error';

/** Levels from least to most severe. */
const LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error'];

/**
 * The logger `createTerminus` uses when given none: one JSON object per line on stderr (stdout may
 * carry stdio protocol messages), `warn` and up by default, so a crashing handler is never silent
 * (its entry names the task id and epoch) and a healthy server writes nothing.
 * @example
 * const terminus = await createTerminus({ db: './tasks.db', tools: [report], logger: stderrLogger('info') });
 */
export function stderrLogger(level: LogLevel = 'warn'): Logger {
  const min = LEVELS.indexOf(level);
  const write =
    (entryLevel: LogLevel) =>
    (message: string, fields?: Record<string, unknown>): void => {
      if (LEVELS.indexOf(entryLevel) < min) return;
      const entry = { time: new Date().toISOString(), level: entryLevel, message, ...fields };
      process.stderr.write(`${JSON.stringify(entry)}\n`);
    };
  return { debug: write('debug'), info: write('info'), warn: write('warn'), error: write('error') };
}
