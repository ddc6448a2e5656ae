/**
 * When the reader of the CLI's output goes away: `terminus call … 2>&1 | grep`, whose grep dies of
 * the same Ctrl-C that asks for a cancel, or `terminus ops logs ID --follow | head`. Node reports
 * a write's EPIPE as an `error` event on the stream, and one nobody hears ends the process: with
 * the cancel half-way, before the ledger recorded it, and the task ran on.
 *
 * - stderr says what a command is doing, for a person: without a reader the command goes on unseen,
 *   since what it does is recorded and what it says is not needed to do it.
 * - stdout carries the command's output: without a reader there is nothing left to produce, and the
 *   command ends as a Unix tool does on SIGPIPE, with 141. A result it could not print is in the
 *   ledger (`terminus ops result`). A command whose stdout is an MCP transport (`serve --stdio`,
 *   `bridge`) hands it over first: its transport sees the error and the command stops in order.
 *
 * Any other error on either stream is thrown as before.
 */
export const EXIT_BROKEN_PIPE = 141;

const isEpipe = (error: NodeJS.ErrnoException): boolean => error.code === 'EPIPE';

function onStdoutError(error: NodeJS.ErrnoException): void {
  if (!isEpipe(error)) throw error;
  process.exit(EXIT_BROKEN_PIPE);
}

export function onBrokenPipe(): void {
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (!isEpipe(error)) throw error;
  });
  process.stdout.on('error', onStdoutError);
}

/** stdout becomes an MCP transport, whose own error handling ends the command. */
export function handOverStdout(): void {
  process.stdout.off('error', onStdoutError);
}
