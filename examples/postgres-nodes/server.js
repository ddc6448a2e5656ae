// One node of several on one PostgreSQL database: any node answers for any task, a task whose node
// dies is re-run by another after its lease (10 s), and a cancel on one node stops the run on another.
// Run each node: DATABASE_URL=postgres://... PORT=3001 NODE_ID=a node server.js
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createTerminus, createTerminusServer, defineTaskTool } from 'mcp-terminus';

const crunch = defineTaskTool({
  name: 'crunch',
  description: 'Works for `seconds` seconds, reporting progress every second',
  inputSchema: z.object({ seconds: z.number().int().min(1).max(3600) }),
  handler: async ({ seconds }, ctx) => {
    for (let s = ctx.lastCheckpoint ?? 0; s < seconds; s++) {
      await sleep(1000, undefined, { signal: ctx.signal });
      await ctx.progress(s + 1, seconds);
      await ctx.checkpoint(s + 1);
    }
    return { content: [{ type: 'text', text: `crunched ${seconds} s on ${process.env.NODE_ID}` }] };
  },
});

const terminus = await createTerminus({
  db: process.env.DATABASE_URL ?? 'postgres://localhost/terminus',
  tools: [crunch],
  // The same schema on every node of one deployment; a unique id per node (its lease owner).
  ...(process.env.PG_SCHEMA === undefined ? {} : { pgSchema: process.env.PG_SCHEMA }),
  engine: { nodeId: process.env.NODE_ID ?? `node-${process.pid}` },
});
const http = await createTerminusServer({ engine: terminus.engine }).serveHttp({
  port: Number(process.env.PORT ?? 3000),
});
console.log(`listening on ${http.url}`);

const stop = () => void http.close().then(() => terminus.close());
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
