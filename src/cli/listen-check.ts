/**
 * `terminus serve` binds before it touches the database: a port in use or a bad `--host` is one line
 * on stderr and exit 1, and no database file is left behind by a server that never listened.
 */
import { createServer } from 'node:net';

/** One line naming the address and what to do, for an error `listen` raised. */
export function listenErrorMessage(host: string, port: number, error: unknown): string {
  const code = (error as { code?: unknown }).code;
  const where = `${host}:${port}`;
  switch (code) {
    case 'EADDRINUSE':
      return `port ${port} on ${host} is in use: stop the other server or pick another --port (0 picks a free one)`;
    case 'EACCES':
      return `no permission to bind ${where}: use a port above 1023 or run with the right privileges`;
    case 'EADDRNOTAVAIL':
      return `--host ${host} is not an address of this machine: use 127.0.0.1, 0.0.0.0 or one of its interface addresses`;
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return `--host ${host} does not resolve (${String(code)}): use an IP address such as 127.0.0.1 or 0.0.0.0`;
    default:
      return `cannot listen on ${where}: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/**
 * Binds `host:port` once and lets it go, so the usual mistakes are found before the store is opened.
 * The real bind can still lose a race with another process; its error gets the same message.
 */
export async function probeListen(host: string, port: number): Promise<void> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error) => reject(new Error(listenErrorMessage(host, port, error))));
    server.listen({ host, port, exclusive: true }, () => resolve());
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
}
