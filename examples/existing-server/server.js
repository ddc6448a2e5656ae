// An existing SDK v2 McpServer (a plain tool, a resource, a prompt), served the author's way
// (createMcpHandler on @hono/node-server), gains a durable task tool: the lines marked `+ terminus`.
// Run: node server.js   (PORT and DB pick the port and the SQLite file)
import { serve } from '@hono/node-server';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { createTerminus } from 'mcp-terminus'; // + terminus
import { report } from './report.js'; // + terminus

const terminus = await createTerminus({ db: process.env.DB ?? './tasks.db', tools: [report] }); // + terminus

const handler = createMcpHandler((ctx) => {
  const server = new McpServer({ name: 'notes', version: '1.0.0' });
  server.registerTool(
    'ping',
    { description: 'Answers pong', inputSchema: z.object({ word: z.string().default('pong') }) },
    async ({ word }) => ({ content: [{ type: 'text', text: word }] }),
  );
  server.registerResource('readme', 'notes://readme', { mimeType: 'text/plain' }, async (uri) => ({
    contents: [{ uri: uri.href, text: 'Notes server' }],
  }));
  server.registerPrompt('summarize', { argsSchema: z.object({ text: z.string() }) }, ({ text }) => ({
    messages: [{ role: 'user', content: { type: 'text', text: `Summarize: ${text}` } }],
  }));
  return terminus.install(server, ctx); // + terminus (was: return server;)
});

const http = serve(
  { fetch: (request) => handler.fetch(request), port: Number(process.env.PORT ?? 3000), hostname: '127.0.0.1' },
  (info) => console.log(`listening on http://127.0.0.1:${info.port}/mcp`),
);

const stop = () => http.close(() => void handler.close().then(() => terminus.close())); // + terminus (terminus.close)
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
