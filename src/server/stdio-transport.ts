import { Writable } from 'node:stream';

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
