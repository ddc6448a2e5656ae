/**
 * A real HTTP server (engine, store, every wire) on 127.0.0.1 port 0 whose one tool, `stepped`,
 * reports progress only when the test lets it: `advanceTo(n)` lets it report steps up to `n` and
 * resolves once the server holds step `n`. The CLI tests drive the server's progress with it, so
 * what they assert never depends on how fast a loaded machine runs a timed tool.
 */
import { z } from 'zod';
import { systemClock, systemIds } from '../../src/core/system.js';
import { createEngine } from '../../src/runner/engine.js';
import { defineTaskTool } from '../../src/runner/tool.js';
import { createTerminusServer } from '../../src/server/terminus-server.js';
import type { IncomingMessage } from 'node:http';
import type { AuthInfo } from '@modelcontextprotocol/server';
import { createMemoryTaskStore } from '../../src/store/memory/index.js';

export interface SteppedServer {
  readonly url: string;
  /** Lets `stepped` report steps up to `step`, without waiting (no task may be running yet). */
  allow(step: number): void;
  /** Lets `stepped` report steps up to `step`; resolves once the server committed that step. */
  advanceTo(step: number): Promise<void>;
  /** The last step the server committed (0 before the first). */
  readonly step: number;
  close(): Promise<void>;
}

export const STEPS = 8;

export async function startSteppedServer(
  options: { readonly authenticate?: (req: IncomingMessage) => Promise<AuthInfo | undefined> } = {},
): Promise<SteppedServer> {
  let allowed = 0;
  let committed = 0;
  const wakers = new Set<() => void>();
  const wake = (): void => {
    for (const w of [...wakers]) w();
  };
  const until = (done: () => boolean): Promise<void> =>
    new Promise((resolve) => {
      const check = (): void => {
        if (!done()) return;
        wakers.delete(check);
        resolve();
      };
      wakers.add(check);
      check();
    });
  const stepped = defineTaskTool({
    name: 'stepped',
    description: 'reports its steps as the test allows them',
    inputSchema: z.object({ title: z.string().default('stepped') }),
    pollIntervalMs: 250,
    handler: async ({ title }, ctx) => {
      for (let i = 1; i <= STEPS; i++) {
        await until(() => allowed >= i || ctx.signal.aborted);
        ctx.signal.throwIfAborted();
        await ctx.progress(i, STEPS, `step ${i} of ${STEPS}`);
        committed = i;
        wake();
      }
      return { content: [{ type: 'text', text: `# ${title}\n${STEPS} steps` }], structuredContent: { title } };
    },
  });
  const store = createMemoryTaskStore();
  const engine = createEngine({ store, tools: [stepped], clock: systemClock, ids: systemIds, claimIntervalMs: 50 });
  engine.start();
  const http = await createTerminusServer({ engine }).serveHttp({
    port: 0,
    ...(options.authenticate === undefined ? {} : { authenticate: options.authenticate }),
  });
  return {
    url: http.url,
    get step() {
      return committed;
    },
    allow: (step) => {
      allowed = Math.max(allowed, step);
      wake();
    },
    advanceTo: async (step) => {
      allowed = Math.max(allowed, step);
      wake();
      await until(() => committed >= step);
    },
    close: async () => {
      allowed = STEPS;
      wake();
      await http.close();
      await engine.stop();
      await store.close();
    },
  };
}
