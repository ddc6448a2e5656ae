import { ProtocolError, type ServerContext } from '@modelcontextprotocol/server';
import type { TaskEngine } from '../runner/engine-port.js';
import { isTerminusError } from '../core/errors.js';
import { runToolInline } from './inline.js';

const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/**
 * `tools/call` for an era no enabled wire creates tasks on (2025 clients until that wire lands):
 * everything runs inline; a `required` tool is refused with `-32021`, naming the extension a
 * 2026-07-28 client would declare to get a task.
 */
export async function callToolInline(
  engine: TaskEngine,
  params: { name: string; arguments?: Record<string, unknown> },
  ctx: ServerContext,
): Promise<Record<string, unknown>> {
  const tool = engine.tools.get(params.name);
  if (tool === undefined) throw new ProtocolError(-32602, `Unknown tool: ${params.name}`, { reason: 'unknown_tool' });
  if (tool.taskSupport === 'required') {
    throw new ProtocolError(-32021, `Tool ${tool.name} runs only as a task`, {
      requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
    });
  }
  try {
    return await runToolInline(engine, tool, params.arguments ?? {}, ctx);
  } catch (error) {
    if (error instanceof ProtocolError) throw error;
    if (isTerminusError(error, 'invalid_argument')) {
      throw new ProtocolError(-32602, `Invalid arguments: ${error.message}`, { reason: 'invalid_arguments' });
    }
    throw new ProtocolError(-32603, 'Internal error');
  }
}
