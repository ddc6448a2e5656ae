import { afterEach, describe, expect, it } from 'vitest';
import type { TaskEngine } from '../../src/runner/engine-port.js';
import { inputKey } from '../../src/runner/input.js';
import type { InputReply } from '../../src/runner/tool.js';
import { BACKENDS, closeStores, engineFor, nodeStore, OWNER, text, tool, until, untilStatus } from './helpers.js';

const engines: TaskEngine[] = [];
afterEach(async () => {
  await Promise.all(engines.splice(0).map((e) => e.stop()));
  await closeStores();
});

function start(engine: TaskEngine): TaskEngine {
  engines.push(engine);
  engine.start();
  return engine;
}

const NAME_SCHEMA = { type: 'object', properties: { name: { type: 'string' } } } as const;

describe.each(BACKENDS)('requestInput ($name)', ({ open }) => {
  it('goes input_required, resumes on respond, and completes with the reply', async () => {
    const store = await open();
    // Long heartbeat: the reply must come through the in-process path.
    const engine = start(
      engineFor(
        store,
        [
          tool('greet', async (_a, ctx) => {
            const reply = await ctx.requestInput(NAME_SCHEMA, 'Your name?');
            return text(`hello ${String(reply.content?.['name'])} (${reply.action})`);
          }),
        ],
        { leaseMs: 60_000, heartbeatMs: 20_000 },
      ),
    );
    const { task } = await engine.submit({ owner: OWNER, tool: 'greet', args: {}, wire: 'mcp-tasks-ext' });
    const waiting = await untilStatus(store, task.id, (t) => t.status === 'input_required');
    const key = inputKey(0, NAME_SCHEMA, 'Your name?');
    expect(Object.keys(waiting.inputRequests)).toEqual([key]);
    expect(waiting.inputRequests[key]).toEqual({
      method: 'elicitation/create',
      params: { message: 'Your name?', requestedSchema: NAME_SCHEMA },
    });
    const changed = engine.waitForChange(OWNER, task.id, { sinceUpdatedAt: waiting.updatedAt, timeoutMs: 5_000 });
    await engine.respond(OWNER, task.id, { [key]: { action: 'accept', content: { name: 'Ada' } } });
    expect((await changed).status).not.toBe('input_required');
    const done = await untilStatus(store, task.id, (t) => t.status === 'completed');
    expect(done.result).toEqual(text('hello Ada (accept)'));
  });

  it('sees a reply written by another node within one heartbeat', async () => {
    const inner = await open();
    const engine = start(
      engineFor(inner, [tool('ask', async (_a, ctx) => text((await ctx.requestInput(NAME_SCHEMA, 'q')).action))]),
    );
    const other = engineFor(inner, []); // own events: only the heartbeat re-read can tell the runner
    const { task } = await engine.submit({ owner: OWNER, tool: 'ask', args: {}, wire: 'mcp-tasks-ext' });
    await untilStatus(inner, task.id, (t) => t.status === 'input_required');
    await other.respond(OWNER, task.id, { [inputKey(0, NAME_SCHEMA, 'q')]: { action: 'decline' } });
    const done = await untilStatus(inner, task.id, (t) => t.status === 'completed');
    expect(done.result).toEqual(text('decline'));
  });

  it('keeps two concurrent requests outstanding at once under distinct keys', async () => {
    const store = await open();
    const engine = start(
      engineFor(store, [
        tool('two', async (_a, ctx) => {
          const [first, second] = await Promise.all([
            ctx.requestInput(NAME_SCHEMA, 'first?'),
            ctx.requestInput(NAME_SCHEMA, 'second?'),
          ]);
          return text(`${String(first.content?.['name'])}+${String(second.content?.['name'])}`);
        }),
      ]),
    );
    const { task } = await engine.submit({ owner: OWNER, tool: 'two', args: {}, wire: 'mcp-tasks-ext' });
    const waiting = await untilStatus(store, task.id, (t) => Object.keys(t.inputRequests).length === 2);
    const k1 = inputKey(0, NAME_SCHEMA, 'first?');
    const k2 = inputKey(1, NAME_SCHEMA, 'second?');
    expect(Object.keys(waiting.inputRequests).sort()).toEqual([k1, k2].sort());
    expect(waiting.status).toBe('input_required');

    const half = await engine.respond(OWNER, task.id, { [k2]: { action: 'accept', content: { name: 'B' } } });
    expect(half.status).toBe('input_required');
    expect(Object.keys(half.inputRequests)).toEqual([k1]);
    await engine.respond(OWNER, task.id, { [k1]: { action: 'accept', content: { name: 'A' } } });
    const done = await untilStatus(store, task.id, (t) => t.status === 'completed');
    expect(done.result).toEqual(text('A+B'));
  });

  it('survives the node: a re-run gets the stored reply without asking again (S9)', async () => {
    const inner = await open();
    const storeA = nodeStore(inner);
    const replies: { node: string; epoch: number; reply: InputReply }[] = [];
    const make = (node: string) =>
      tool('ask', async (_a, ctx) => {
        const reply = await ctx.requestInput(NAME_SCHEMA, 'Your name?');
        replies.push({ node, epoch: ctx.epoch, reply });
        return text(`hi ${String(reply.content?.['name'])}`);
      });
    const a = engineFor(storeA, [make('node-a')], { nodeId: 'node-a' });
    a.start();
    const { task } = await a.submit({ owner: OWNER, tool: 'ask', args: {}, wire: 'mcp-tasks-ext' });
    const waiting = await untilStatus(inner, task.id, (t) => t.status === 'input_required');
    storeA.kill(); // node A dies while its handler waits for the reply

    const key = inputKey(0, NAME_SCHEMA, 'Your name?');
    expect(Object.keys(waiting.inputRequests)).toEqual([key]);
    const storeB = nodeStore(inner);
    const b = engineFor(storeB, [make('node-b')], { nodeId: 'node-b' });
    // The reply arrives at node B before it runs anything.
    await b.respond(OWNER, task.id, { [key]: { action: 'accept', content: { name: 'Ada' } } });
    start(b);
    const done = await untilStatus(inner, task.id, (t) => t.status === 'completed');
    expect(done.epoch).toBe(2);
    expect(done.result).toEqual(text('hi Ada'));
    expect(replies).toEqual([{ node: 'node-b', epoch: 2, reply: { action: 'accept', content: { name: 'Ada' } } }]);
    // No second request: B never wrote one, and the only key ever issued is the first.
    expect(storeB.calls.get('requestInput')).toBeUndefined();
    expect(Object.keys(done.inputResponses)).toEqual([key]);
  });

  it('a re-run that reaches the question before the reply waits on the same key', async () => {
    const inner = await open();
    const storeA = nodeStore(inner);
    const make = () =>
      tool('ask', async (_a, ctx) => text(String((await ctx.requestInput(NAME_SCHEMA, 'q')).content?.['v'])));
    const a = engineFor(storeA, [make()], { nodeId: 'node-a' });
    a.start();
    const { task } = await a.submit({ owner: OWNER, tool: 'ask', args: {}, wire: 'mcp-tasks-ext' });
    await untilStatus(inner, task.id, (t) => t.status === 'input_required');
    storeA.kill();
    const storeB = nodeStore(inner);
    const b = start(engineFor(storeB, [make()], { nodeId: 'node-b' }));
    await until(() => storeB.calls.get('requestInput') === 1, "B's handler asking again");
    const rerun = await inner.get(OWNER, task.id, Date.now());
    const key = inputKey(0, NAME_SCHEMA, 'q');
    expect(rerun).toMatchObject({ epoch: 2, status: 'input_required' });
    expect(Object.keys(rerun?.inputRequests ?? {})).toEqual([key]);
    await b.respond(OWNER, task.id, { [key]: { action: 'accept', content: { v: 42 } } });
    const done = await untilStatus(inner, task.id, (t) => t.status === 'completed');
    expect(done.result).toEqual(text('42'));
    expect(Object.keys(done.inputResponses)).toEqual([key]);
  });
});
