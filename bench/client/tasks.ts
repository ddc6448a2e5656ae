/** The 2025-11-25 task calls every variant answers, on the thin client. */
import type { RpcClient } from './rpc.js';

export interface CreatedTask {
  readonly taskId: string;
  readonly pollInterval: number | undefined;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
export const isTerminalStatus = (status: unknown): boolean => typeof status === 'string' && TERMINAL.has(status);

/** Task-augmented `tools/call`: resolves when the server has answered `CreateTaskResult`. */
export async function submitTask(client: RpcClient, tool: string, args: Record<string, unknown>): Promise<CreatedTask> {
  const answer = await client.request('tools/call', { name: tool, arguments: args, task: { ttl: 3_600_000 } });
  const task = answer.task as { taskId?: unknown; pollInterval?: unknown } | undefined;
  if (typeof task?.taskId !== 'string')
    throw new Error(`no task in the answer: ${JSON.stringify(answer).slice(0, 200)}`);
  return { taskId: task.taskId, pollInterval: typeof task.pollInterval === 'number' ? task.pollInterval : undefined };
}

export async function getStatus(client: RpcClient, taskId: string): Promise<string> {
  const answer = await client.request('tasks/get', { taskId });
  return String(answer.status);
}

/** `tasks/result`: blocks until the task is terminal, then answers the tool's result. */
export function taskResult(client: RpcClient, taskId: string): Promise<Record<string, unknown>> {
  return client.request('tasks/result', { taskId });
}

export function callSync(
  client: RpcClient,
  tool: string,
  args: Record<string, unknown>,
): Promise<Record<string, unknown>> {
  return client.request('tools/call', { name: tool, arguments: args });
}

/** Runs `count` jobs with at most `width` in flight; job `i` gets the index. */
export async function pool(
  count: number,
  width: number,
  job: (i: number, lane: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, count) }, async (_, lane) => {
      while (next < count) {
        const i = next;
        next += 1;
        await job(i, lane);
      }
    }),
  );
}
