/**
 * Ours through the wire: `bench/servers/terminus.ts` on PostgreSQL (the figure starts it), a
 * 2026-07-28 Tasks-extension client (one stateless POST per request): `tools/call` of `bench_stamp`
 * creates the task, `tasks/get` is read until it is completed, and the inlined result carries the
 * instant the handler started (wall-clock ms, the same host's clock).
 */
import { tasksExtClient } from '../client/tasks-ext.js';
import { BENCH_TOKEN } from '../lib/proc.js';
import type { QueueSystem } from './system.js';

export function openHttp(url: string): QueueSystem {
  const client = tasksExtClient(url, BENCH_TOKEN);
  return {
    async add(key) {
      const answer = await client.call('tools/call', { name: 'bench_stamp', arguments: { key } });
      if (typeof answer.taskId !== 'string') throw new Error(`no task: ${JSON.stringify(answer).slice(0, 200)}`);
      return answer.taskId;
    },
    async result(taskId) {
      const task = await client.call('tasks/get', { taskId });
      if (task.status !== 'completed') {
        if (task.status === 'working') return undefined;
        throw new Error(`task ${taskId} is ${String(task.status)}`);
      }
      const content = (task.result as { content?: { text?: string }[] } | undefined)?.content;
      return Number(content?.[0]?.text);
    },
    stop: async () => undefined,
  };
}
