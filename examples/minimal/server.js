// A durable task tool on SQLite, served by mcp-terminus's own HTTP server.
// Run: node server.js   (PORT and DB pick the port and the SQLite file)
import { z } from 'zod';
import { createTerminus, createTerminusServer, defineTaskTool } from 'mcp-terminus';

const report = defineTaskTool({
  name: 'report',
  description: 'Builds a report of `pages` pages, one checkpoint per page',
  inputSchema: z.object({ pages: z.number().int().min(1).max(100) }),
  outputSchema: z.object({ pages: z.number() }),
  handler: async ({ pages }, ctx) => {
    // A re-run after a crash resumes after the last page it checkpointed.
    for (let page = ctx.lastCheckpoint ?? 0; page < pages; page++) {
      ctx.signal.throwIfAborted();
      await ctx.progress(page + 1, pages, `page ${page + 1}`);
      await ctx.checkpoint(page + 1);
    }
    return { content: [{ type: 'text', text: `${pages} pages` }], structuredContent: { pages } };
  },
});

const terminus = await createTerminus({ db: process.env.DB ?? './tasks.db', tools: [report] });
const http = await createTerminusServer({ engine: terminus.engine }).serveHttp({
  port: Number(process.env.PORT ?? 3000),
});
console.log(`listening on ${http.url}`);

process.on('SIGTERM', () => void http.close().then(() => terminus.close()));
process.on('SIGINT', () => void http.close().then(() => terminus.close()));
