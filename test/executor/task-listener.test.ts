/**
 * The executor's one push stream per connection (`TaskListener`) on a virtual clock, with a fake
 * stream opener that records what was opened: one stream at a time however many tasks are
 * watched, replaced when a new id needs it, reopened with back-off after a drop, given up for good
 * on a refusal (polling is the baseline, reference 2.7), closed with the executor.
 */
import { describe, expect, it } from 'vitest';
import type { OpenedStream } from '../../src/executor/adapters/connection.js';
import { TaskListener } from '../../src/executor/adapters/task-listener.js';
import { WireFailure } from '../../src/executor/wire-port.js';
import { VirtualClock } from './executor-helpers.js';

interface FakeStream {
  readonly ids: readonly string[];
  readonly at: number;
  /** The server ends the stream (a drop). */
  end(why: string): void;
  readonly aborted: () => boolean;
}

function fakeServer(clock: VirtualClock, refuse?: () => WireFailure | undefined) {
  const streams: FakeStream[] = [];
  let open = 0;
  let maxOpen = 0;
  const opener = (ids: readonly string[], signal: AbortSignal): Promise<OpenedStream> => {
    const refusal = refuse?.();
    if (refusal !== undefined) return Promise.reject(refusal);
    open++;
    maxOpen = Math.max(maxOpen, open);
    let end: (why: string) => void = () => undefined;
    const ended = new Promise<string>((resolve) => {
      end = (why) => {
        open--;
        resolve(why);
      };
    });
    let finished = false;
    const finish = (why: string): void => {
      if (finished) return;
      finished = true;
      end(why);
    };
    signal.addEventListener('abort', () => finish('closed by the client'), { once: true });
    streams.push({ ids: [...ids], at: clock.now(), end: finish, aborted: () => signal.aborted });
    return Promise.resolve({ ended });
  };
  return {
    streams,
    opener,
    get open() {
      return open;
    },
    get maxOpen() {
      return maxOpen;
    },
  };
}

describe('TaskListener: one push stream per connection', () => {
  it('reference 2.7: one stream names every watched id; a new id replaces it, never a second one beside it', async () => {
    const clock = new VirtualClock();
    const server = fakeServer(clock);
    const listener = new TaskListener({ clock, open: server.opener, allTasks: false });
    const stopA = listener.watch('a');
    listener.watch('b');
    await clock.advance(0);
    // Watches of one turn share the first stream.
    expect(server.streams.map((s) => s.ids)).toEqual([['a', 'b']]);
    listener.watch('c');
    await clock.advance(0);
    expect(server.streams.map((s) => s.ids)).toEqual([
      ['a', 'b'],
      ['a', 'b', 'c'],
    ]);
    expect(server.streams[0]!.aborted()).toBe(true);
    expect(server.maxOpen).toBe(1);
    // An id no longer watched does not reopen; it is left out of the next stream.
    stopA();
    listener.watch('d');
    await clock.advance(0);
    expect(server.streams.at(-1)!.ids).toEqual(['b', 'c', 'd']);
    listener.close();
    await clock.advance(0);
    expect(server.open).toBe(0);
    expect(listener.state).toBe('closed');
  });

  it('a session stream (2025-11-25 GET) carries every task: new ids open nothing more', async () => {
    const clock = new VirtualClock();
    const server = fakeServer(clock);
    const listener = new TaskListener({ clock, open: server.opener, allTasks: true });
    for (const id of ['a', 'b', 'c']) listener.watch(id);
    await clock.advance(0);
    listener.watch('d');
    await clock.advance(0);
    expect(server.streams).toHaveLength(1);
    listener.close();
  });

  it('a dropped stream is opened again after 1 s, then 2 s, 4 s (back-off while it keeps dropping)', async () => {
    const clock = new VirtualClock();
    const server = fakeServer(clock);
    const listener = new TaskListener({ clock, open: server.opener, allTasks: false });
    listener.watch('a');
    await clock.advance(0);
    const t0 = clock.now();
    for (let i = 0; i < 3; i++) {
      server.streams.at(-1)!.end('stream dropped');
      await clock.advance(10_000);
    }
    expect(server.streams.map((s) => s.at - t0)).toEqual([0, 1_000, 12_000, 24_000]);
    expect(listener.state).toBe('open');
    listener.close();
  });

  it('a server without such a stream (-32601, HTTP 4xx) is asked once: polling only from then on', async () => {
    const clock = new VirtualClock();
    let asked = 0;
    const server = fakeServer(clock, () => {
      asked++;
      return new WireFailure('rejected', 'push stream refused: HTTP 404', { httpStatus: 404 });
    });
    const listener = new TaskListener({ clock, open: server.opener, allTasks: false });
    listener.watch('a');
    await clock.advance(0);
    listener.watch('b');
    await clock.advance(60_000);
    expect(asked).toBe(1);
    expect(listener.state).toBe('unsupported');
    listener.close();
  });

  it('429 too many streams: tried again after the Retry-After, not before', async () => {
    const clock = new VirtualClock();
    let refusals = 1;
    const server = fakeServer(clock, () =>
      refusals-- > 0 ? new WireFailure('throttled', 'HTTP 429', { httpStatus: 429, retryAfterMs: 5_000 }) : undefined,
    );
    const listener = new TaskListener({ clock, open: server.opener, allTasks: false });
    listener.watch('a');
    await clock.advance(4_999);
    expect(server.streams).toHaveLength(0);
    await clock.advance(1);
    expect(server.streams).toHaveLength(1);
    listener.close();
  });

  it('nothing left to watch: the stream closes', async () => {
    const clock = new VirtualClock();
    const server = fakeServer(clock);
    const listener = new TaskListener({ clock, open: server.opener, allTasks: false });
    const stop = listener.watch('a');
    await clock.advance(0);
    expect(server.open).toBe(1);
    stop();
    await clock.advance(0);
    expect(server.open).toBe(0);
    expect(listener.state).toBe('idle');
    listener.watch('b');
    await clock.advance(0);
    expect(server.streams.at(-1)!.ids).toEqual(['b']);
    listener.close();
  });
});
