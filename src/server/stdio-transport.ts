import { isUtf8 } from 'node:buffer';
import { Writable } from 'node:stream';
import {
  parseJSONRPCMessage,
  ReadBuffer,
  RELATED_TASK_META_KEY,
  STDIO_DEFAULT_MAX_BUFFER_SIZE,
  type JSONRPCMessage,
} from '@modelcontextprotocol/server';
import { StdioServerTransport } from '@modelcontextprotocol/server/stdio';
import { firstInvalidUtf8 } from './http/edge.js';

/**
 * The SDK's stdio transport on the process's stdin and stdout, with two costs of a `tasks/get`
 * taken out (docs/benchmarks.md, figure 8): the answers of one turn leave as one write
 * (`coalescedOutput`), and an ordinary request is not run through zod (`PlainRequestBuffer`).
 * Everything else (closing on stdin's end, errors, the buffer bound) is the SDK's own.
 */
export function stdioTransport(): StdioServerTransport {
  const transport = new StdioServerTransport(process.stdin, coalescedOutput());
  // The SDK reads lines through this field; test/server/stdio-transport.test.ts fails if it moves.
  const fields = transport as unknown as { _readBuffer: ReadBuffer };
  if (!(fields._readBuffer instanceof ReadBuffer))
    throw new Error('StdioServerTransport no longer reads through _readBuffer');
  fields._readBuffer = new PlainRequestBuffer(STDIO_DEFAULT_MAX_BUFFER_SIZE, (answer) => {
    transport.send(answer).catch(() => undefined);
  });
  return transport;
}

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);

/**
 * The SDK's line buffer, with its message check (`JSONRPCMessageSchema.parse`, about 10 % of a
 * stdio `tasks/get`) skipped for a request whose zod parse is the identity: `jsonrpc` "2.0", a
 * string or safe-integer id, a string method, no other keys, and params absent or an object whose
 * `_meta`, if any, is an object with neither of the two keys the schema looks into. Anything else
 * (notifications, responses, every doubtful shape) goes through the SDK's own parse, so what
 * reaches the protocol is what the SDK would have passed, and what it would refuse it still
 * refuses. Lines that are not JSON are skipped, as the SDK skips them. A line that is not valid
 * UTF-8 never reaches the SDK either: where the SDK would decode the bad bytes as U+FFFD and run the
 * request with strings the client never sent, it is answered with the parse error `-32700` (with
 * the request's id when one can be read, so the client is not left waiting) through `refuse`.
 */
export class PlainRequestBuffer extends ReadBuffer {
  // The SDK's ReadBuffer, line for line, but for the parse: its parse is a module function no
  // subclass can reach, so the buffer is this class's own.
  #buffer: Buffer | undefined;
  readonly #max: number;
  readonly #refuse: (answer: JSONRPCMessage) => void;

  constructor(maxBufferSize = STDIO_DEFAULT_MAX_BUFFER_SIZE, refuse: (answer: JSONRPCMessage) => void = () => {}) {
    super({ maxBufferSize });
    this.#max = maxBufferSize;
    this.#refuse = refuse;
  }

  override append(chunk: Buffer): void {
    if ((this.#buffer?.length ?? 0) + chunk.length > this.#max) {
      this.clear();
      throw new Error(`ReadBuffer exceeded maximum size of ${this.#max} bytes`);
    }
    this.#buffer = this.#buffer === undefined ? chunk : Buffer.concat([this.#buffer, chunk]);
  }

  override readMessage(): JSONRPCMessage | null {
    while (this.#buffer !== undefined) {
      const index = this.#buffer.indexOf('\n');
      if (index === -1) return null;
      const bytes = this.#buffer.subarray(0, index);
      const line = this.#buffer.toString('utf8', 0, index).replace(/\r$/, '');
      this.#buffer = this.#buffer.subarray(index + 1);
      if (!isUtf8(bytes)) {
        this.#refuse(invalidUtf8Answer(line, firstInvalidUtf8(bytes)));
        continue;
      }
      try {
        return parseLine(line);
      } catch (error) {
        if (error instanceof SyntaxError) continue;
        throw error;
      }
    }
    return null;
  }

  override clear(): void {
    this.#buffer = undefined;
  }
}

/** The `-32700` answer to a line that is not UTF-8: the request's id if its lenient parse shows one, else null. */
function invalidUtf8Answer(lenient: string, offset: number): JSONRPCMessage {
  let id: unknown = null;
  try {
    id = (JSON.parse(lenient) as { id?: unknown }).id ?? null;
  } catch {
    // not even JSON once decoded: no id to answer with
  }
  // An id decoded from bad bytes is not the client's: answer it as unknown.
  if (typeof id === 'string' ? id.includes('\uFFFD') : !Number.isSafeInteger(id)) id = null;
  const message = `Parse error: the line is not valid UTF-8 (byte ${offset}); send JSON encoded in UTF-8`;
  return { jsonrpc: '2.0', id, error: { code: -32700, message } } as unknown as JSONRPCMessage;
}

/** The parse of one line, as the SDK's `deserializeMessage`, without zod where zod changes nothing. */
export function parseLine(line: string): JSONRPCMessage {
  const value: unknown = JSON.parse(line);
  return isPlainRequest(value) ? value : parseJSONRPCMessage(value);
}

function isPlainRequest(value: unknown): value is JSONRPCMessage {
  if (!isObject(value) || value.jsonrpc !== '2.0' || typeof value.method !== 'string') return false;
  const { id, params } = value;
  if (typeof id !== 'string' && !Number.isSafeInteger(id)) return false;
  for (const key of Object.keys(value)) if (!REQUEST_KEYS.has(key)) return false;
  if (params === undefined) return true;
  if (!isObject(params) || Object.hasOwn(params, '__proto__')) return false;
  const meta = params._meta;
  if (meta === undefined) return true;
  return (
    isObject(meta) &&
    !Object.hasOwn(meta, '__proto__') &&
    !Object.hasOwn(meta, 'progressToken') &&
    !Object.hasOwn(meta, RELATED_TASK_META_KEY)
  );
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * stdout for the stdio transport, with the answers of one turn of the event loop written together.
 * On Linux a write to a pipe is a synchronous system call that also wakes the reader; 16 reads in
 * flight on one connection came back as 16 writes, a third of the server's CPU per `tasks/get`
 * (docs/benchmarks.md, figure 8). Here the first write of a turn corks the stream and the turn's
 * end (`setImmediate`) uncorks it, so the chunks go out as one write (`_writev`), in order. The
 * SDK's transport sees an ordinary stream: `write` returns false past the high-water mark and
 * `drain` follows; an error of the target is this stream's error; `end` flushes what is held.
 */
export function coalescedOutput(target: NodeJS.WritableStream = process.stdout): Writable {
  const out: Writable = new Writable({
    decodeStrings: false,
    write(chunk: string | Buffer, _encoding, done) {
      writeThrough(target, chunk, done);
    },
    writev(chunks, done) {
      const parts = chunks.map((c) => c.chunk as string | Buffer);
      writeThrough(
        target,
        parts.every((p) => typeof p === 'string') ? parts.join('') : Buffer.concat(parts.map(bytes)),
        done,
      );
    },
  });
  const write = out.write.bind(out) as (chunk: unknown, ...rest: unknown[]) => boolean;
  let corked = false;
  out.write = ((chunk: unknown, ...rest: unknown[]) => {
    if (!corked && !out.destroyed) {
      corked = true;
      out.cork();
      setImmediate(() => {
        corked = false;
        out.uncork();
      });
    }
    return write(chunk, ...rest);
  }) as Writable['write'];
  target.on('error', (error: Error) => out.destroy(error));
  return out;
}

function writeThrough(
  target: NodeJS.WritableStream,
  chunk: string | Buffer,
  done: (error?: Error | null) => void,
): void {
  if (target.write(chunk)) done();
  else target.once('drain', () => done());
}

function bytes(part: string | Buffer): Buffer {
  return typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
}
