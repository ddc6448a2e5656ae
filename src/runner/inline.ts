import { TerminusError } from '../core/errors.js';
import type { Ids, Logger } from '../core/ports.js';
import { checkArgumentSize, findTool, parseArgs } from './arguments.js';
import type { InlineCommand, InlineOutcome } from './engine-port.js';
import { checkProgress } from './execution.js';
import { prepareLine } from './task-log.js';
import { logHandlerError, withFields } from './logger.js';
import { settle, toOutcome } from './outcome.js';
import type { TaskContext, TaskToolDefinition } from './tool.js';

/**
 * Runs a tool without a task. Nothing is durable: `checkpoint` does nothing, `log` and `output`
 * check their input and drop the line (there is no task whose log could be read), `progress` goes to
 * `onProgress`, and `requestInput` rejects `capability_required` (an inline call has no channel for
 * it). A `required` tool refuses with `capability_required` (-32021 at the edge, X-04). The outcome
 * maps as a task's does; an aborted call rejects with the signal's reason instead.
 */
export async function runInline(
  settings: {
    readonly tools: ReadonlyMap<string, TaskToolDefinition>;
    readonly ids: Ids;
    readonly logger: Logger;
    readonly maxArgumentBytes: number;
  },
  command: InlineCommand,
): Promise<InlineOutcome> {
  const tool = findTool(settings.tools, command.tool);
  if (tool.taskSupport === 'required') {
    throw new TerminusError('capability_required', `Tool ${tool.name} runs only as a task`, {
      details: { tool: tool.name },
    });
  }
  checkArgumentSize(command.args, settings.maxArgumentBytes);
  const args = parseArgs(tool, command.args);
  command.signal.throwIfAborted();
  const taskId = settings.ids.unique('inline');
  const context: TaskContext = {
    taskId,
    signal: command.signal,
    attempt: 1,
    epoch: 0,
    lastCheckpoint: undefined,
    logger: withFields(settings.logger, { taskId, tool: tool.name }),
    progress: async (done, total, message) => {
      checkProgress(done, total);
      command.onProgress?.({
        done,
        ...(total === undefined ? {} : { total }),
        ...(message === undefined ? {} : { message }),
      });
    },
    checkpoint: async () => {},
    // No task, so no log to read: lines are checked as for a task (the same errors) and dropped.
    log: async (text, fields) => void prepareLine('log', text, fields, { maxLineBytes: Number.MAX_SAFE_INTEGER }),
    output: async (text) => void prepareLine('output', text, undefined, { maxLineBytes: Number.MAX_SAFE_INTEGER }),
    requestInput: async () => {
      throw new TerminusError('capability_required', `Tool ${tool.name} asked for input, which needs a task`, {
        details: { tool: tool.name },
      });
    },
  };
  const settled = await settle(() => tool.handler(args, context));
  if (!settled.ok && command.signal.aborted) throw command.signal.reason;
  if (!settled.ok) logHandlerError(context.logger, settled.error);
  return toOutcome(settled, tool);
}
