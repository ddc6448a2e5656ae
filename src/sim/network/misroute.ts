/**
 * Task id misuse and 404-before-expiry: a status read sent about another task (or none), and the S8
 * probe a misuse triggers (a foreign principal must learn no more than an unknown id tells).
 */
import { canonicalJson } from '../../core/digest.js';
import type { Transport } from '../wires/spec.js';
import { deliver, idleLink } from './endpoint.js';
import type { Link, NetworkState } from './state.js';

/** Task id misuse and 404-before-expiry: the request names another (or no) task. */
export function misroute(
  net: NetworkState,
  op: string | null,
  taskId: string,
  method: string,
  params: Record<string, unknown>,
  principal: string,
  link: Link,
): { method: string; params: Record<string, unknown> } {
  if (net.fire('not_found_before_expiry', op) !== null) {
    return net.wire.retarget(method, params, randomId(net));
  }
  if (net.fire('task_id_misuse', op) === null) return { method, params };
  void probeS8(net, taskId, method, params, principal, link.transport);
  const other = [...net.o.facts.tasks.keys()].find((id) => id !== taskId);
  return net.wire.retarget(method, params, other ?? randomId(net));
}

/** An id no task has: 16 bytes of the series' random, as the store's ids read. */
function randomId(net: NetworkState): string {
  const bytes = Buffer.alloc(16);
  for (let i = 0; i < 4; i++) bytes.writeUInt32BE(net.o.random.u32(), i * 4);
  return bytes.toString('base64url');
}

/** S8: a foreign principal asking for a real id must get exactly what an unknown id gets. */
async function probeS8(
  net: NetworkState,
  taskId: string,
  method: string,
  params: Record<string, unknown>,
  principal: string,
  transport: Transport,
): Promise<void> {
  const mine = net.wire.retarget(method, params, taskId);
  const foreign = await deliver(
    net.o.server,
    `mallory-of-${principal}`,
    mine.method,
    mine.params,
    transport,
    idleLink(),
  );
  const unknownId = net.wire.retarget(method, params, randomId(net));
  const unknown = await deliver(net.o.server, principal, unknownId.method, unknownId.params, transport, idleLink());
  if (foreign === null || unknown === null) return;
  if (canonicalJson(foreign) !== canonicalJson(unknown)) net.o.log.s8Leaks.push(taskId);
}
