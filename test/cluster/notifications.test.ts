import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postListen, rpc, sseMessages } from '../server/helpers.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, PG_URL } from '../store/postgres-fixture.js';
import { LegacySession, type Json } from '../wires/helpers.js';
import { build, eventually, killAll, readEffects, startNode, type Node } from './nodes.js';

/**
 * Issue 6 point 3: "status notifications reach the client through whichever node it is connected
 * to". Two `terminus serve --db postgres://...` nodes of the built CLI on one schema; every task
 * runs on node A, every status change is written by node A, and the client that must see them is
 * connected only to node B. Which node runs a task is made certain, not left to the claim race:
 * either A is alone when the task is claimed, or B is full (16 handlers, the engine's default
 * concurrency) when it is submitted.
 */
const WAIT_MS = 30_000;
const TERMINAL = ['completed', 'failed', 'cancelled'];
/** `concurrency` default of the engine `terminus serve` builds: a node running this many claims no more. */
const NODE_CONCURRENCY = 16;

interface Pair {
  readonly schema: string;
  readonly cwd: string;
}

/** One SSE stream read in the background; `messages` fills as frames arrive. */
interface Stream {
  readonly status: number;
  readonly messages: Json[];
  /** Resolves once `pick(messages)` is not undefined; fails naming `what` (and what came) after WAIT_MS. */
  until<T>(what: string, pick: (messages: Json[]) => T | undefined): Promise<T>;
  stop(): void;
}

function readSse(response: Response, abort: AbortController): Stream {
  const messages: Json[] = [];
  let ended = false;
  if (response.body !== null) {
    const body = response.body;
    void (async () => {
      try {
        for await (const message of sseMessages<Json>(body)) messages.push(message);
      } catch {
        // aborted by stop()
      } finally {
        ended = true;
      }
    })();
  }
  return {
    status: response.status,
    messages,
    until: (what, pick) =>
      eventually(
        what,
        () => {
          const found = pick(messages);
          if (found === undefined && ended) throw new Error(`stream ended before ${what}: ${JSON.stringify(messages)}`);
          return found;
        },
        WAIT_MS,
        25,
      ).catch((error: unknown) => {
        throw new Error(`${String(error)}; the stream had: ${JSON.stringify(messages)}`);
      }),
    stop: () => abort.abort(),
  };
}

/** `subscriptions/listen` for `taskIds` on the Tasks-extension wire, as test/server/listen.test.ts opens it. */
async function listen(node: Node, taskIds: readonly string[]): Promise<Stream> {
  const abort = new AbortController();
  const response = await postListen(node.url, taskIds, { id: 'sub-cluster', signal: abort.signal });
  return readSse(response, abort);
}

async function submitTask(node: Node, tool: string, args: Record<string, unknown>): Promise<string> {
  const answer = await rpc(node.url, 'tools/call', { name: tool, arguments: args });
  if (answer.result?.resultType !== 'task')
    throw new Error(`${node.id}: expected a task, got ${JSON.stringify(answer)}`);
  return answer.result.taskId as string;
}

/** The pid that recorded `taskId`'s start: the node process running it. */
function startedBy(cwd: string, taskId: string): Promise<number> {
  return eventually(
    `${taskId} started`,
    () => readEffects(cwd).find((e) => e.taskId === taskId && e.kind === 'started')?.pid,
    WAIT_MS,
  );
}

const tasksOf = (messages: Json[], taskId: string): Json[] =>
  messages.filter((m) => m.method === 'notifications/tasks' && m.params.taskId === taskId);

/** The statuses pushed for `taskId`, consecutive repeats folded (a push also goes out when only the detail changed). */
const statusesOf = (frames: Json[]): string[] =>
  frames.map((f) => f.params.status as string).filter((s, i, all) => i === 0 || all[i - 1] !== s);

if (PG_URL === '') {
  describe('cluster notifications: two terminus serve nodes on one PostgreSQL', failWithoutDatabase);
} else {
  const admin = adminPool();
  const pairs: Pair[] = [];

  const freshPair = (label: string): Pair => {
    const pair = { schema: freshSchema(label), cwd: mkdtempSync(join(tmpdir(), `terminus-${label}-`)) };
    pairs.push(pair);
    return pair;
  };
  const start = (pair: Pair, id: string): Promise<Node> =>
    startNode({ id: `${pair.schema}-${id}`, db: PG_URL, schema: pair.schema, cwd: pair.cwd });

  beforeAll(() => build(), 180_000);
  afterAll(async () => {
    await killAll();
    for (const pair of pairs) {
      await dropSchema(admin, pair.schema);
      rmSync(pair.cwd, { recursive: true, force: true });
    }
    await admin.end();
  });

  describe('issue 6 point 3: status notifications reach the client through whichever node it is connected to', () => {
    it('X-67 subscriptions/listen on node B acks, then pushes every status change node A makes, up to completed and cancelled', async () => {
      const pair = freshPair('listen');
      // A alone claims both tasks; B starts once they run on A.
      const a = await start(pair, 'a');
      const asked = await submitTask(a, 'ask', { question: 'which colour?' });
      const held = await submitTask(a, 'hold', { seconds: 120 });
      expect(await startedBy(pair.cwd, asked)).toBe(a.pid);
      expect(await startedBy(pair.cwd, held)).toBe(a.pid);
      const b = await start(pair, 'b');

      const stream = await listen(b, [asked, held]);
      try {
        expect(stream.status).toBe(200);
        const ack = await stream.until('the acknowledgement', (ms) => ms[0]);
        expect(ack).toMatchObject({
          method: 'notifications/subscriptions/acknowledged',
          params: { notifications: { taskIds: [asked, held] } },
        });
        // The state each task is in when the stream opens: what node A wrote before B even ran.
        const parked = await stream.until('input_required for the ask task', (ms) =>
          tasksOf(ms, asked).find((f) => f.params.status === 'input_required'),
        );
        await stream.until('working for the hold task', (ms) =>
          tasksOf(ms, held).find((f) => f.params.status === 'working'),
        );

        // Both changes are made through node A only: the answer and the cancel go to A, and A's
        // handlers write the terminal statuses.
        const keys = Object.keys(parked.params.inputRequests as Record<string, unknown>);
        expect(keys).toHaveLength(1);
        const update = await rpc(a.url, 'tasks/update', {
          taskId: asked,
          inputResponses: { [keys[0]!]: { action: 'accept', content: { answer: 'teal' } } },
        });
        expect(update.error).toBeUndefined();
        const cancel = await rpc(a.url, 'tasks/cancel', { taskId: held });
        expect(cancel.error).toBeUndefined();

        const completed = await stream.until('completed for the ask task, on node B', (ms) =>
          tasksOf(ms, asked).find((f) => TERMINAL.includes(f.params.status)),
        );
        expect(completed.params).toMatchObject({ taskId: asked, status: 'completed' });
        // Node A's handler, at its first epoch, produced the result node B pushed.
        expect(completed.params.result.structuredContent).toMatchObject({ answer: 'teal', pid: a.pid, epoch: 1 });
        const cancelled = await stream.until('cancelled for the hold task, on node B', (ms) =>
          tasksOf(ms, held).find((f) => TERMINAL.includes(f.params.status)),
        );
        expect(cancelled.params).toMatchObject({ taskId: held, status: 'cancelled' });
        expect(readEffects(pair.cwd).filter((e) => e.taskId === held && e.kind === 'aborted')).toMatchObject([
          { pid: a.pid, epoch: 1 },
        ]);

        // In order, nothing after terminal, all stamped with this subscription.
        const askStatuses = statusesOf(tasksOf(stream.messages, asked));
        expect(askStatuses[0]).toBe('input_required');
        expect(askStatuses.at(-1)).toBe('completed');
        expect(askStatuses.slice(1, -1).every((s) => s === 'working')).toBe(true);
        expect(statusesOf(tasksOf(stream.messages, held))).toEqual(['working', 'cancelled']);
        expect(
          stream.messages.every((m) => m.method !== 'notifications/tasks' || [asked, held].includes(m.params.taskId)),
        ).toBe(true);
        for (const m of stream.messages) {
          expect(m.params._meta['io.modelcontextprotocol/subscriptionId']).toBe('sub-cluster');
        }
      } finally {
        stream.stop();
      }
    }, 60_000);

    it('2025-11-25: a task created through a session on node B but running on node A pushes notifications/tasks/status on B’s GET stream', async () => {
      const pair = freshPair('legacy');
      // B alone, then full: NODE_CONCURRENCY handlers that outlive the test, so the task submitted
      // next through B can only be claimed by A.
      const b = await start(pair, 'b');
      const fillers = await Promise.all(
        Array.from({ length: NODE_CONCURRENCY }, () => submitTask(b, 'hold', { seconds: 300 })),
      );
      for (const id of fillers) expect(await startedBy(pair.cwd, id)).toBe(b.pid);
      const a = await start(pair, 'a');

      const session = await LegacySession.open(b.url, undefined);
      const stream = await session.openStream();
      try {
        const created = await session.request('tools/call', { name: 'hold', arguments: { seconds: 2 }, task: {} });
        expect(created.error, JSON.stringify(created)).toBeUndefined();
        const taskId = created.result.task.taskId as string;
        expect(await startedBy(pair.cwd, taskId)).toBe(a.pid);

        const statuses = await eventually(
          `notifications/tasks/status completed for ${taskId} on node B's GET stream`,
          () => {
            const found = stream.messages.filter(
              (m: Json) => m.method === 'notifications/tasks/status' && m.params.taskId === taskId,
            );
            return found.some((m: Json) => TERMINAL.includes(m.params.status)) ? found : undefined;
          },
          WAIT_MS,
          25,
        ).catch((error: unknown) => {
          throw new Error(`${String(error)}; the GET stream had: ${JSON.stringify(stream.messages)}`);
        });
        expect(statuses.at(-1).params).toMatchObject({ taskId, status: 'completed' });
        // The status A wrote is the one B read back: the same task, done by A's handler.
        const result = await session.request('tasks/result', { taskId });
        expect(result.result?.structuredContent).toMatchObject({ pid: a.pid, epoch: 1 });
      } finally {
        stream.stop();
        await session.close();
      }
    }, 60_000);
  });
}
