import type { ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from '../../../core/ports.js';
import type { TaskRecord } from '../../../core/task.js';
import type { TaskEngine } from '../../../runner/engine-port.js';
import { relatedTask } from './encode.js';

/**
 * The `input_required` side channel (reference 1.11): while a client is blocked on `tasks/result`,
 * the task's outstanding input requests go to it as server->client requests on that request's own
 * stream (`ctx.mcpReq.send`), tagged with the related-task `_meta` (T-43, T-51); each answer is
 * stored with `engine.respond`, which returns the task to `working` once nothing is left (T-53).
 *
 * A request is in flight at most once per process: two concurrent `tasks/result` calls for one task
 * do not ask the same question twice. An answer that cannot be delivered (stream gone, client error)
 * frees its key, so the next `tasks/result` asks again; the stored request itself is durable.
 *
 * Needs a connection that can carry a server->client request and route the reply back: a session
 * (the sessionful HTTP leg, or stdio). On the SDK's stateless legacy leg the send fails and
 * `tasks/result` simply keeps waiting.
 */
const inFlight = new Set<string>();

export interface InputChannel {
  readonly engine: TaskEngine;
  readonly owner: string;
  readonly logger: Logger;
}

/** How a request is tied to its task on the wire; default: the 2025 related-task `_meta`. */
export type InputTag = (params: Record<string, unknown>, task: TaskRecord) => Record<string, unknown>;

const relatedTaskTag: InputTag = (params, task) => ({
  ...params,
  _meta: { ...asMeta(params._meta), ...relatedTask(task.id) },
});

export function deliverInputRequests(
  task: TaskRecord,
  ctx: Pick<ServerContext, 'mcpReq'>,
  channel: InputChannel,
  tag: InputTag = relatedTaskTag,
): void {
  for (const [key, request] of Object.entries(task.inputRequests)) {
    const slot = `${task.id}\u0000${key}`;
    if (inFlight.has(slot)) continue;
    inFlight.add(slot);
    const params = tag(request.params, task);
    ctx.mcpReq
      .send({ method: request.method, params } as never)
      .then((answer: unknown) => channel.engine.respond(channel.owner, task.id, { [key]: stripMeta(answer) }))
      .catch((error: unknown) => {
        channel.logger.debug('input request not answered on this stream', {
          taskId: task.id,
          key,
          error: String(error),
        });
      })
      .finally(() => inFlight.delete(slot));
  }
}

function asMeta(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}

/** The stored reply is the bare `ElicitResult`; the transport's `_meta` is not part of the answer. */
function stripMeta(answer: unknown): unknown {
  if (typeof answer !== 'object' || answer === null || Array.isArray(answer)) return answer;
  const { _meta: _dropped, ...rest } = answer as Record<string, unknown>;
  return rest;
}
