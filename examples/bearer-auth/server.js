// Bearer tokens bind every task to its caller: another caller's task id answers "not found".
// Run: node server.js   (PORT and DB pick the port and the SQLite file)
import { z } from 'zod';
import { createTerminus, createTerminusServer, defineTaskTool } from 'mcp-terminus';

// Stand-in for your identity provider: token -> client id. Use a real verifier (JWT, introspection).
const clients = new Map([
  ['token-alice', 'alice'],
  ['token-bob', 'bob'],
]);

const whoami = defineTaskTool({
  name: 'whoami',
  description: 'Says which client started the task',
  inputSchema: z.object({}),
  handler: async () => ({ content: [{ type: 'text', text: 'done' }] }),
});

const terminus = await createTerminus({ db: process.env.DB ?? './tasks.db', tools: [whoami] });
const http = await createTerminusServer({ engine: terminus.engine }).serveHttp({
  port: Number(process.env.PORT ?? 3000),
  // Resolves the caller (its clientId owns the tasks it creates) or throws: the request gets 401.
  authenticate: async (req) => {
    const token = req.headers.authorization?.replace(/^Bearer /, '');
    const clientId = token === undefined ? undefined : clients.get(token);
    if (clientId === undefined) throw new Error('missing or unknown bearer token');
    return { token, clientId, scopes: [] };
  },
});
console.log(`listening on ${http.url}`);

const stop = () => void http.close().then(() => terminus.close());
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
