// `createBridge` in front of a durable task server, for hosts that give up after a fixed timeout.
// Run: node server.js   (PORT: the bridge's port; UPSTREAM: an MCP server's URL to bridge instead of
// the slow task tool started here; INLINE_WAIT: seconds a call waits before it returns a handle;
// LEDGER and DB: the bridge's ledger and the upstream's task store, SQLite files)
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createTerminus, createTerminusServer, defineTaskTool } from 'mcp-terminus';
import { createBridge } from 'mcp-terminus/bridge';
import { openSqliteLedger } from 'mcp-terminus/sqlite';

// The upstream: one task tool that takes longer than a host waits.
const slowReport = defineTaskTool({
  name: 'slow_report',
  description: 'Builds a report, one second per section',
  inputSchema: z.object({ sections: z.number().int().min(1).max(600) }),
  handler: async ({ sections }, ctx) => {
    for (let section = ctx.lastCheckpoint ?? 0; section < sections; section++) {
      await sleep(1000, undefined, { signal: ctx.signal });
      await ctx.progress(section + 1, sections, `section ${section + 1}`);
      await ctx.checkpoint(section + 1);
    }
    return { content: [{ type: 'text', text: `report of ${sections} sections` }] };
  },
});

let upstreamUrl = process.env.UPSTREAM;
let stopUpstream = async () => {};
if (upstreamUrl === undefined) {
  const terminus = await createTerminus({ db: process.env.DB ?? './tasks.db', tools: [slowReport] });
  const upstream = await createTerminusServer({ engine: terminus.engine }).serveHttp({ port: 0 });
  upstreamUrl = upstream.url;
  stopUpstream = () => upstream.close().then(() => terminus.close());
}

// The bridge: the upstream's tools as ordinary tools, plus terminus_wait, terminus_status, ...
const ledger = openSqliteLedger({ path: process.env.LEDGER ?? './bridge.db' });
const bridge = await createBridge({
  ledger,
  upstreams: { reports: { url: upstreamUrl } },
  inlineWaitMs: Number(process.env.INLINE_WAIT ?? 45) * 1000,
});
const http = await bridge.serveHttp({ port: Number(process.env.PORT ?? 8080) });
console.log(`listening on ${http.url}`);

const stop = async () => {
  await http.close();
  await bridge.close();
  await ledger.close();
  await stopUpstream();
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
