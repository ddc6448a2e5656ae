import { CLIENT_CAPABILITIES_META_KEY } from '@modelcontextprotocol/server';
import type { RawRpcMessage } from '../adapter.js';
import { TASKS_EXTENSION } from './constants.js';

/**
 * X-40 front check. The SDK's entry serves `subscriptions/listen` itself, before any server
 * instance, and silently drops a `taskIds` filter, so a non-declaring client asking for task
 * notifications would get an ack instead of the required `-32021` (reference 5.5). This runs on the
 * raw HTTP request first. A declaring client passes through and gets the SDK's ack, which lists no
 * task ids: we deliver no `notifications/tasks` (documented gap; polling is the baseline).
 */
export function listenPrecheck(message: RawRpcMessage): Response | undefined {
  if (message.method !== 'subscriptions/listen') return undefined;
  const params = asRecord(message.params);
  const taskIds = asRecord(params?.notifications)?.taskIds;
  if (taskIds === undefined) return undefined;
  const capabilities = asRecord(asRecord(params?._meta)?.[CLIENT_CAPABILITIES_META_KEY]);
  const declared = asRecord(capabilities?.extensions)?.[TASKS_EXTENSION];
  if (declared !== undefined && declared !== null && typeof declared === 'object') return undefined;
  const body = {
    jsonrpc: '2.0',
    id: message.id ?? null,
    error: {
      code: -32021,
      message: `Task notifications need the ${TASKS_EXTENSION} extension declared on the request`,
      data: { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    },
  };
  return new Response(JSON.stringify(body), { status: 400, headers: { 'content-type': 'application/json' } });
}

function asRecord(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}
