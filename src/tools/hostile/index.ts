import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTaskTool, type TaskToolDefinition } from '../../runner/tool.js';

/**
 * Fixture tools that misbehave on purpose, served by `terminus serve --fixtures hostile`: what an
 * operator drills against (and `bench/attacks.ts` measures) to see that one bad handler ends only
 * its own run. Run them under `--workers N`: on the serving thread a heap bomb or a spinner takes
 * the serving thread with it, which is the point of workers.
 */

/**
 * How `heap_bomb` allocates: `small` many 100,000-element arrays; `big` 64 MB arrays; `json` 32 MB
 * arrays from `JSON.parse`; `huge` one 960 MB array; `typed` 64 MB Float64Arrays, outside the JS
 * heap (only the memory limit sees them).
 */
export const HEAP_BOMBS = ['small', 'big', 'json', 'huge', 'typed'] as const;

function allocate(how: (typeof HEAP_BOMBS)[number]): number {
  const hoard: unknown[] = [];
  switch (how) {
    case 'small':
      for (;;) hoard.push(Array.from({ length: 100_000 }, (_, i) => i));
    case 'big':
      for (;;) hoard.push(new Array(8 * 1024 * 1024).fill(0));
    case 'json': {
      const text = JSON.stringify(Array.from({ length: 4_000_000 }, (_, i) => i));
      for (;;) hoard.push(JSON.parse(text));
    }
    case 'huge':
      hoard.push(new Array(120 * 1024 * 1024).fill(0));
      return hoard.length;
    case 'typed':
      for (;;) hoard.push(new Float64Array(8 * 1024 * 1024).fill(1));
  }
}

const heapBomb = defineTaskTool({
  name: 'heap_bomb',
  description: 'Allocates until a limit ends it (`how`: small, big, json, huge, typed).',
  inputSchema: z.object({ how: z.enum(HEAP_BOMBS).default('big') }),
  taskSupport: 'required',
  handler: async ({ how }) => ({ content: [{ type: 'text', text: `survived with ${allocate(how)} allocations` }] }),
});

const spin = defineTaskTool({
  name: 'spin',
  description: 'Holds its event loop for `seconds` and ignores its signal: only a kill ends it early.',
  inputSchema: z.object({ seconds: z.number().min(0).max(3600).default(600) }),
  taskSupport: 'required',
  handler: async ({ seconds }) => {
    const until = Date.now() + seconds * 1000;
    while (Date.now() < until) {
      // no await: a CPU-bound handler that never looks at ctx.signal
    }
    return { content: [{ type: 'text', text: `spun ${seconds} s` }] };
  },
});

const logFlood = defineTaskTool({
  name: 'log_flood',
  description: 'Writes `lines` task log lines without awaiting them, then returns.',
  inputSchema: z.object({ lines: z.number().int().min(1).max(10_000_000).default(200_000) }),
  taskSupport: 'required',
  handler: async ({ lines }, ctx) => {
    for (let i = 1; i <= lines; i++) void ctx.log(`line ${i} of ${lines}: the quick brown fox jumps over the lazy dog`);
    return { content: [{ type: 'text', text: `wrote ${lines} lines` }] };
  },
});

const nap = defineTaskTool({
  name: 'nap',
  description: 'Sleeps `ms` and returns (a well-behaved task: it hears its signal).',
  inputSchema: z.object({ ms: z.number().int().min(0).max(600_000).default(0) }),
  handler: async ({ ms }, ctx) => {
    await sleep(ms, undefined, { signal: ctx.signal });
    return { content: [{ type: 'text', text: `slept ${ms} ms` }] };
  },
});

const echo = defineTaskTool({
  name: 'echo',
  description: 'Returns its text at once, without a task (a fast call that other callers measure).',
  inputSchema: z.object({ text: z.string().max(1000).default('') }),
  taskSupport: 'forbidden',
  handler: async ({ text }) => ({ content: [{ type: 'text', text }] }),
});

/** The hostile fixture set (a plain array: a worker imports it as is). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool keeps its own Args type
export const hostileTools: TaskToolDefinition<any>[] = [heapBomb, spin, logFlood, nap, echo];
