import { join } from 'node:path';
import type { TaskToolDefinition } from '../../runner/tool.js';
import { analyzeCsvTool } from './analyze-csv.js';
import { buildReportTool } from './build-report.js';
import { migrateTool } from './migrate.js';
import { runTestsTool } from './run-tests.js';

export interface DemoToolsOptions {
  /** Folder for generated samples and migration output; default `./.terminus/data`. */
  readonly dataDir?: string;
}

/**
 * The demo tools `terminus serve` registers: `analyze_csv` (streams a CSV, checkpointing its byte
 * offset), `build_report` (minutes of sectioned work), `migrate` (an input round, then batches) and
 * `run_tests` (a fake test suite logging each result to the task's log).
 * @example
 * const terminus = await createTerminus({ db: './tasks.db', tools: demoTools({ dataDir: './data' }) });
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool keeps its own Args type
export function demoTools(options: DemoToolsOptions = {}): TaskToolDefinition<any>[] {
  const dataDir = options.dataDir ?? join('.terminus', 'data');
  return [analyzeCsvTool(dataDir), buildReportTool, migrateTool(dataDir), runTestsTool];
}
