import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Command, InvalidArgumentError } from 'commander';
import { ledgerRoutes } from '../console/ledger.js';
import { sendJson, toWebRequest, writeWebResponse } from '../server/http/node-bridge.js';
import { matchRoute } from '../server/http/routes.js';
import { openLedgerOrExit } from './open-ledger.js';
import { defaultLedgerPath } from './paths.js';

interface UiFlags {
  readonly ledger: string;
  readonly host: string;
  readonly port: number;
}

/**
 * `terminus ops ui`: the executor's ledger in a browser (operations by state, each one's history,
 * evidence and receipt), read-only, on 127.0.0.1 by default. Prints one line with its URL.
 */
export function registerOpsUi(program: Command): void {
  const ops = program.commands.find((c) => c.name() === 'ops');
  if (ops === undefined) return;
  ops
    .command('ui')
    .description('browse the ledger: operations by state, history, evidence, receipts (read-only)')
    .option('--ledger <file|url>', 'SQLite ledger file or postgres:// URL (env TERMINUS_LEDGER)', defaultLedgerPath())
    .option('--host <host>', 'interface to bind', '127.0.0.1')
    .option('--port <port>', 'port to bind (0 picks a free one)', parsePort, 3001)
    .action((flags: UiFlags) => serveUi(flags));
}

async function serveUi(flags: UiFlags): Promise<void> {
  const ledger = await openLedgerOrExit(flags.ledger, 'terminus ops ui');
  const routes = ledgerRoutes({ ledger });
  const server = createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const match = matchRoute(routes, req.method ?? 'GET', pathname === '/' ? '/ui' : pathname);
    if (match === undefined) {
      sendJson(res, 404, { error: 'not_found', path: pathname });
      return;
    }
    const abort = new AbortController();
    res.on('close', () => abort.abort());
    toWebRequest(req, abort.signal, 64 * 1024)
      .then(({ request, body }) => match.route.handle(request, { authInfo: undefined, params: match.params, body }))
      .then((response) => writeWebResponse(res, response))
      .catch((error: unknown) => {
        process.stderr.write(`terminus ops ui: ${error instanceof Error ? error.message : String(error)}\n`);
        if (!res.headersSent) sendJson(res, 500, { error: 'internal' });
        else res.destroy();
      });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host: flags.host, port: flags.port }, () => resolve());
  }).catch((error: unknown) => {
    process.stderr.write(`terminus ops ui: cannot listen on ${flags.host}:${flags.port}: ${String(error)}\n`);
    process.exit(1);
  });
  const address = server.address() as AddressInfo;
  process.stdout.write(`terminus ops ui on http://${flags.host}:${address.port}/ui (ledger ${flags.ledger})\n`);
  const stop = (): void => {
    server.close();
    server.closeAllConnections();
    ledger.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

function parsePort(value: string): number {
  const port = Number(value);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new InvalidArgumentError('not a port number');
  return port;
}
