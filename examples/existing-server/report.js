import { z } from 'zod';
import { defineTaskTool } from 'mcp-terminus';

/** The durable task tool the existing server gains. */
export const report = defineTaskTool({
  name: 'report',
  title: 'Report',
  description: 'Builds a report of `pages` pages, one checkpoint per page',
  inputSchema: z.object({ pages: z.number().int().min(1).max(100) }),
  outputSchema: z.object({ pages: z.number() }),
  annotations: { readOnlyHint: true },
  handler: async ({ pages }, ctx) => {
    for (let page = ctx.lastCheckpoint ?? 0; page < pages; page++) {
      ctx.signal.throwIfAborted();
      await ctx.progress(page + 1, pages, `page ${page + 1}`);
      await ctx.checkpoint(page + 1);
    }
    return { content: [{ type: 'text', text: `${pages} pages` }], structuredContent: { pages } };
  },
});
