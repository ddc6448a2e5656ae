/**
 * The parent-death guard of a stdio server. A process killed with SIGKILL cannot end its children,
 * and a server that keeps a timer or a subscription alive does not exit when its stdin closes (its
 * launcher, `npx` or a shell, waits for it): the server chain then outlives the client that started
 * it. The guard is a small `node -e` program started in the server's place, leader of the server's
 * process group. It runs the server in that group and holds a lifeline, an extra pipe (fd 3) whose
 * other end only the client holds: when the client is gone, however it ended, the kernel closes its
 * end, and the guard ends the whole group (SIGTERM, then SIGKILL after the grace period).
 *
 * Over the lifeline the guard reports one JSON line first: `{"spawned":pid}`, or `{"error":"..."}`
 * when the server cannot be started (so `ENOENT` is still a start failure, not an exit). When the
 * server exits, the guard ends what the server left in its group and exits the same way.
 */

/** The guard program (CommonJS, for `node -e`): argv is `[graceMs, command, ...args]`. */
export const GUARD_SOURCE = `/* terminus stdio guard: ends this process group when its client is gone */
'use strict';
const { spawn } = require('child_process');
const net = require('net');
const [graceText, command, ...args] = process.argv.slice(1);
const grace = Number(graceText) || 2000;
const group = (signal) => { try { process.kill(-process.pid, signal); } catch {} };
let ending = false;
function end() {
  if (ending) return;
  ending = true;
  group('SIGTERM');
  setTimeout(() => group('SIGKILL'), grace);
}
// A signal to the group is for the server: the guard goes when the server has gone.
for (const signal of ['SIGTERM', 'SIGINT', 'SIGHUP']) process.on(signal, () => undefined);
const lifeline = new net.Socket({ fd: 3, readable: true, writable: true });
lifeline.on('data', () => undefined);
lifeline.on('end', end);
lifeline.on('close', end);
lifeline.on('error', end);
const report = (message, then) => lifeline.write(JSON.stringify(message) + '\\n', then);
const child = spawn(command, args, { stdio: 'inherit' });
child.once('spawn', () => report({ spawned: child.pid }));
child.once('error', (error) => {
  process.stderr.write('terminus: cannot start ' + command + ': ' + error.message + '\\n');
  report({ error: error.message }, () => process.exit(127));
});
child.once('exit', (code, signal) => {
  group('SIGTERM');
  if (signal === null) process.exit(code === null ? 1 : code);
  process.removeAllListeners(signal);
  process.kill(process.pid, signal);
});
`;

/** The command line that runs `command args` under the guard. */
export function guardedCommand(
  command: string,
  args: readonly string[],
  graceMs: number,
): { readonly command: string; readonly args: string[] } {
  return { command: process.execPath, args: ['-e', GUARD_SOURCE, '--', String(graceMs), command, ...args] };
}

/** The guard's first report on the lifeline. */
export type GuardReport = { readonly spawned: number } | { readonly error: string };

export function parseGuardReport(line: string): GuardReport | null {
  try {
    const value: unknown = JSON.parse(line);
    if (typeof value !== 'object' || value === null) return null;
    const { spawned, error } = value as { spawned?: unknown; error?: unknown };
    if (typeof spawned === 'number') return { spawned };
    if (typeof error === 'string') return { error };
    return null;
  } catch {
    return null;
  }
}
