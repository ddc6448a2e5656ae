import { TerminusError } from '../core/errors.js';
import { requestDigest } from '../core/digest.js';
import { MAX_RETENTION_MS } from '../core/task.js';
import type { CreateOutcome, NewTaskLease } from '../store/port.js';
import { checkArgumentSize, findTool, parseArgs } from './arguments.js';
import type { SubmitCommand } from './engine-port.js';
import type { EngineSettings } from './options.js';
import type { TaskToolDefinition } from './tool.js';
import { resolveWebhooks } from './webhooks.js';

/**
 * Validates a submission and creates its task. Every check runs before the store is touched, so a
 * refused submission writes nothing. Resolves after the store committed (S1). With `lease`, a
 * created task is committed already claimed by this node (`NewTask.lease`).
 */
export async function submitTask(
  settings: EngineSettings,
  command: SubmitCommand,
  lease?: NewTaskLease,
): Promise<CreateOutcome> {
  const tool = findTool(settings.tools, command.tool);
  if (tool.taskSupport === 'forbidden') {
    throw new TerminusError('invalid_argument', `Tool ${tool.name} does not run as a task (taskSupport: forbidden)`, {
      details: { tool: tool.name },
    });
  }
  checkArgumentSize(command.args, settings.maxArgumentBytes);
  const args = parseArgs(tool, command.args);
  const ttlMs = effectiveTtl(settings, tool, command.ttlMs);
  const keepAliveMs = command.keepAliveMs === undefined ? null : effectiveKeepAlive(settings, command.keepAliveMs);
  const webhooks = await resolveWebhooks(settings.webhooks, command.owner, command.webhook);
  const maxLive = settings.maxLiveTasksPerOwner;
  return settings.store.create({
    id: settings.ids.taskId(),
    owner: command.owner,
    tool: tool.name,
    // What the schema accepted (unknown fields stripped, defaults applied): what the handler sees,
    // and all that is worth keeping (issue 12 item 5).
    args,
    // The digest covers the arguments as sent (canonical JSON, so key order does not matter): a
    // retry repeats its request byte for byte, so it matches even after a deploy changed the
    // schema's defaults; a request that differs in any field, stripped ones included, is a
    // different request for its submission key (S5).
    requestDigest: requestDigest(tool.name, command.args),
    submissionKey: command.submissionKey ?? null,
    wire: command.wire,
    ttlMs,
    keepAliveMs,
    pollIntervalMs: tool.pollIntervalMs ?? settings.defaultPollIntervalMs,
    now: settings.clock.now(),
    ...(lease === undefined ? {} : { lease }),
    ...(webhooks.length === 0 ? {} : { webhooks }),
    // T-79, counted by the store in the create's own write (0: no cap).
    ...(maxLive === 0 ? {} : { maxLive }),
  });
}

/**
 * The TTL a task gets. A tool's `ttlMs` is both its default and its maximum (null: unlimited);
 * without one the default is `defaultTtlMs`. `maxTtlMs` caps everything, unlimited included.
 */
export function effectiveTtl(
  settings: Pick<EngineSettings, 'defaultTtlMs' | 'maxTtlMs'>,
  tool: Pick<TaskToolDefinition, 'ttlMs'>,
  requested: number | null | undefined,
): number | null {
  if (requested !== undefined && requested !== null) duration('ttl', requested);
  const toolMax = tool.ttlMs ?? undefined;
  const caps = [toolMax, settings.maxTtlMs].filter((cap): cap is number => cap !== undefined);
  const max = caps.length === 0 ? null : Math.min(...caps);
  const wanted = requested === undefined ? (tool.ttlMs === undefined ? settings.defaultTtlMs : tool.ttlMs) : requested;
  if (wanted === null) return max;
  // Clamped, never refused: the server chooses the retention (T-34) and reports it back.
  return Math.floor(Math.min(wanted, max ?? MAX_RETENTION_MS, MAX_RETENTION_MS));
}

function effectiveKeepAlive(settings: Pick<EngineSettings, 'maxTtlMs'>, requested: number): number {
  duration('keepAlive', requested);
  // SEP-1391's answer carries the keepAlive the server chose, so clamping is allowed there too.
  return Math.floor(Math.min(requested, settings.maxTtlMs ?? MAX_RETENTION_MS, MAX_RETENTION_MS));
}

/** Any non-negative number is accepted (a huge one is clamped); a fraction is rounded down. */
function duration(name: string, value: number): void {
  if (Number.isNaN(value) || value < 0) {
    throw new TerminusError('invalid_argument', `${name} must be a non-negative number of milliseconds, got ${value}`, {
      details: { field: name },
    });
  }
}
