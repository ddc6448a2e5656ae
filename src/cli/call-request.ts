/**
 * What one `terminus call` asks for, read from its command line: the flags, the tool's arguments
 * (`--args JSON` or `--args @FILE`) and the one server (`--url` or `--stdio`). A line that does not
 * make a call is a `UsageError` (exit 2).
 */
import { readFileSync } from 'node:fs';
import { MAX_DIGEST_DEPTH, tooDeepForDigest } from '../core/digest.js';
import type { WireChoice } from '../executor/adapters/index.js';
import { stdioDescriptor, urlDescriptor } from './call-connect.js';
import type { ServerFlags } from './server-flags.js';

/** The options of `terminus call`, as commander parses them (`registerCall` declares them). */
export interface CallFlags extends ServerFlags {
  readonly url?: string;
  readonly stdio?: string;
  readonly args: string;
  readonly ledger: string;
  readonly wire: WireChoice;
  readonly budget?: number;
  readonly json: boolean;
  readonly callNode?: string;
  readonly new: boolean;
  readonly cancelOnInterrupt: boolean;
  readonly verbose: boolean;
  readonly followLogs: boolean;
}

/** The call the command makes: to which server, which tool, with which arguments and headers. */
export interface CallRequest {
  readonly server: string;
  readonly tool: string;
  readonly args: Record<string, unknown>;
  readonly headers: Record<string, string>;
}

/** A command line that makes no call: the message is printed and the exit code is 2. */
export class UsageError extends Error {}

/**
 * `--args JSON`, or `--args @FILE` for arguments past what a command line holds (Linux: 128 KiB
 * for one argument, "Argument list too long") or kept in a file. No JSON text starts with @.
 */
export function parseArgs(option: string): Record<string, unknown> {
  const from = option.startsWith('@') ? option.slice(1) : undefined;
  let text = option;
  if (from !== undefined) {
    try {
      text = readFileSync(from, 'utf8');
    } catch (error) {
      throw new UsageError(`--args @${from}: cannot read it: ${(error as Error).message}`);
    }
  }
  const what = from === undefined ? '--args' : `--args @${from}`;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${what} is not valid JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new UsageError(`${what} must be a JSON object, e.g. --args '{"sections": 3}'`);
  }
  if (tooDeepForDigest(value)) {
    throw new UsageError(`${what} nests deeper than ${MAX_DIGEST_DEPTH} levels, more than a call can carry`);
  }
  return value as Record<string, unknown>;
}

/** The server descriptor of `--url` or `--stdio`, exactly one of which is given. */
export function serverOf(flags: CallFlags): string {
  if ((flags.url === undefined) === (flags.stdio === undefined)) {
    throw new UsageError('give exactly one of --url URL or --stdio "COMMAND"');
  }
  try {
    return flags.url !== undefined ? urlDescriptor(flags.url) : stdioDescriptor(flags.stdio!);
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
}
