import { TerminusError } from '../core/errors.js';
import type { TaskToolDefinition } from './tool.js';

/** The tool named `name`, or `invalid_argument` naming the tools that exist. */
export function findTool(tools: ReadonlyMap<string, TaskToolDefinition>, name: string): TaskToolDefinition {
  const tool = tools.get(name);
  if (tool !== undefined) return tool;
  const known = [...tools.keys()].sort().join(', ');
  throw new TerminusError('invalid_argument', `Unknown tool: ${JSON.stringify(name)} (known: ${known || 'none'})`, {
    details: { tool: name },
  });
}

/**
 * Validates `args` with the tool's schema and returns the parsed value (defaults and transforms
 * applied). A failure is `invalid_argument` with every issue as `path: message`, so the caller can
 * show it without parsing anything (-32602 at the edge).
 */
export function parseArgs(tool: TaskToolDefinition, args: unknown): Record<string, unknown> {
  const parsed = tool.inputSchema.safeParse(args);
  if (parsed.success) return parsed.data;
  const issues = parsed.error.issues.map((issue) => ({
    path: issue.path.map(String).join('.'),
    message: issue.message,
  }));
  const summary = issues.map((i) => (i.path === '' ? i.message : `${i.path}: ${i.message}`)).join('; ');
  throw new TerminusError('invalid_argument', `Invalid arguments for tool ${tool.name}: ${summary}`, {
    details: { tool: tool.name, issues },
  });
}

/**
 * Refuses arguments whose JSON is larger than `maxBytes` (`invalid_argument`, -32602 at the edge),
 * before the schema or the store sees them: a stored task keeps its arguments for its whole
 * retention, so their size is a per-task cost every caller could otherwise choose.
 */
export function checkArgumentSize(args: unknown, maxBytes: number): void {
  const bytes = Buffer.byteLength(JSON.stringify(args) ?? '', 'utf8');
  if (bytes <= maxBytes) return;
  throw new TerminusError(
    'invalid_argument',
    `arguments are ${bytes} bytes of JSON; the limit is ${maxBytes} (maxArgumentBytes)`,
    {
      details: { field: 'arguments', bytes, limit: maxBytes },
    },
  );
}
