import { ProtocolError, type ServerContext } from '@modelcontextprotocol/server';
import type { TaskEngine } from '../runner/engine-port.js';
import type { TaskToolDefinition } from '../runner/tool.js';

/**
 * Runs a tool inline, without a task: the synchronous fallback for a caller that cannot take a task
 * and the only path of `forbidden` tools. Bound to the request: a client disconnect aborts
 * the handler. Progress goes out as `notifications/progress` when the request asked for it.
 */
export async function runToolInline(
  engine: TaskEngine,
  tool: TaskToolDefinition,
  args: Record<string, unknown>,
  ctx: ServerContext,
): Promise<Record<string, unknown>> {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  const onProgress =
    progressToken === undefined
      ? undefined
      : (p: { done: number; total?: number; message?: string }) => {
          ctx.mcpReq
            .notify({
              method: 'notifications/progress',
              params: { progressToken, progress: p.done, total: p.total, message: p.message },
            })
            .catch(() => undefined); // progress is advisory; a closed stream must not fail the call
        };
  const outcome = await engine.runInline({
    tool: tool.name,
    args,
    signal: ctx.mcpReq.signal,
    ...(onProgress === undefined ? {} : { onProgress }),
  });
  if (outcome.status === 'failed') {
    throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
  }
  return { ...outcome.result };
}
