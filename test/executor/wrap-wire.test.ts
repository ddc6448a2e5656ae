import { describe, expect, it } from 'vitest';
import type {
  CancelAnswer,
  ClientWire,
  EventsAnswer,
  EventsRequest,
  KeyLookupAnswer,
  LogsAnswer,
  LogsRequest,
  ResultAnswer,
  SubmitAnswer,
  SubmitRequest,
  TaskSnapshot,
  WireStatusAnswer,
} from '../../src/executor/wire-port.js';
import { WireFailure } from '../../src/executor/wire-port.js';
import {
  WIRE_REQUESTS,
  wrapWireRequests,
  type WireAnswered,
  type WireCall,
  type WireRequestName,
} from '../../src/executor/wrap-wire.js';

const ANSWERS = {
  submit: { kind: 'task', taskId: 't-1', status: 'working' } satisfies SubmitAnswer,
  lookupKey: { kind: 'never_created' } satisfies KeyLookupAnswer,
  getStatus: { taskId: 't-1', status: 'working' } satisfies TaskSnapshot,
  fetchResult: { status: 'cancelled' } satisfies ResultAnswer,
  cancel: { kind: 'acked' } satisfies CancelAnswer,
  sendInput: undefined,
  logs: { kind: 'unsupported' } satisfies LogsAnswer,
  events: { kind: 'unsupported' } satisfies EventsAnswer,
} as const satisfies Record<WireRequestName, unknown>;

/**
 * A wire with every member of the port (`Required`: a member added to the port must be added here);
 * a class with a private field, so a method called with the
 * proxy as `this` would throw. Each request records its arguments and answers `answers[name]`, or
 * rejects with `failing` when set.
 */
class RecordingWire implements Required<ClientWire> {
  readonly wire = 'mcp-tasks-ext' as const;
  readonly version = '9.9.9';
  readonly plainOnly = false;
  readonly answersEventInput = true;
  readonly #calls: [string, unknown[]][] = [];
  failing: Error | undefined;
  closed = 0;

  get calls(): readonly [string, unknown[]][] {
    return this.#calls;
  }

  readonly answers = ANSWERS;

  #answer<K extends WireRequestName>(name: K, args: unknown[]): Promise<(typeof ANSWERS)[K]> {
    this.#calls.push([name, args]);
    return this.failing === undefined ? Promise.resolve(this.answers[name]) : Promise.reject(this.failing);
  }

  submit(request: SubmitRequest, signal?: AbortSignal) {
    return this.#answer('submit', [request, signal]);
  }
  lookupKey(submissionKey: string, signal?: AbortSignal) {
    return this.#answer('lookupKey', [submissionKey, signal]);
  }
  getStatus(taskId: string, signal?: AbortSignal) {
    return this.#answer('getStatus', [taskId, signal]);
  }
  fetchResult(taskId: string, signal?: AbortSignal, observed?: WireStatusAnswer) {
    return this.#answer('fetchResult', [taskId, signal, observed]);
  }
  cancel(taskId: string, signal?: AbortSignal) {
    return this.#answer('cancel', [taskId, signal]);
  }
  async sendInput(taskId: string, responses: Readonly<Record<string, unknown>>, signal?: AbortSignal) {
    await this.#answer('sendInput', [taskId, responses, signal]);
  }
  logs(taskId: string, request: LogsRequest, signal?: AbortSignal) {
    return this.#answer('logs', [taskId, request, signal]);
  }
  events(taskId: string, request: EventsRequest, signal?: AbortSignal) {
    return this.#answer('events', [taskId, request, signal]);
  }
  onClose(listener: (reason: string) => void) {
    listener(`closed by ${this.version}`);
    return () => undefined;
  }
  onLogsHint() {
    return () => undefined;
  }
  onStatusHint() {
    return () => undefined;
  }
  onTerminalHeard() {
    return () => undefined;
  }
  watchTask(taskId: string) {
    this.#calls.push(['watchTask', [taskId]]);
    return () => undefined;
  }
  watchLogs(taskId: string) {
    this.#calls.push(['watchLogs', [taskId]]);
    return () => undefined;
  }
  session() {
    return { id: `s-${this.version}`, protocolVersion: '2025-11-25' };
  }
  async close() {
    this.closed += 1;
    await Promise.resolve();
  }
}

const signal = new AbortController().signal;

/** One call of each request with arguments of its own. */
const CALLS: { [K in WireRequestName]: (wire: ClientWire) => Promise<unknown> } = {
  submit: (w) => w.submit({ tool: 'echo', args: { a: 1 }, submissionKey: 'k-1' }, signal),
  lookupKey: (w) => w.lookupKey('k-1', signal),
  getStatus: (w) => w.getStatus('t-status', signal),
  fetchResult: (w) => w.fetchResult('t-fetch', signal, 'completed'),
  cancel: (w) => w.cancel('t-cancel', signal),
  sendInput: (w) => w.sendInput('t-input', { q: 'yes' }, signal),
  logs: (w) => w.logs!('t-logs', { after: 3 }, signal),
  events: (w) => w.events!('t-events', { cursor: 'c-2' }, signal),
};

describe('wrapWireRequests: one decorator of a ClientWire', () => {
  it('lists every request method of the port: every method but the listeners, the watches, session and close', () => {
    const others = [
      'onClose',
      'onLogsHint',
      'onStatusHint',
      'onTerminalHeard',
      'watchTask',
      'watchLogs',
      'session',
      'close',
    ];
    const methods = Object.getOwnPropertyNames(RecordingWire.prototype).filter(
      (name) => name !== 'constructor' && name !== 'calls' && !others.includes(name),
    );
    expect([...WIRE_REQUESTS].sort()).toEqual(methods.sort());
  });

  it('passes every request through with its arguments and answer; the hooks see each kind, inside run', async () => {
    const inner = new RecordingWire();
    const ran: WireCall[] = [];
    const answered: (WireAnswered & { insideRun: boolean })[] = [];
    let running = 0;
    const wrapped = wrapWireRequests(inner, {
      run: async (call, send) => {
        ran.push(call);
        running += 1;
        try {
          return await send();
        } finally {
          running -= 1;
        }
      },
      answered: (done) => answered.push({ ...done, insideRun: running === 1 }),
      failed: () => expect.unreachable('no request failed'),
    });
    for (const name of WIRE_REQUESTS) {
      const answer = await CALLS[name](wrapped);
      expect(answer).toBe(name === 'sendInput' ? undefined : inner.answers[name]);
    }
    expect(inner.calls.map(([name]) => name)).toEqual([...WIRE_REQUESTS]);
    expect(ran.map((call) => call.request)).toEqual([...WIRE_REQUESTS]);
    expect(answered.map((done) => done.request)).toEqual([...WIRE_REQUESTS]);
    for (const [index, [name, args]] of inner.calls.entries()) {
      // The adapter got exactly what the caller passed (the signal too); the hooks saw the same.
      expect(ran[index]!.args).toEqual(args);
      expect(args).toContain(signal);
      expect(answered[index]).toMatchObject({ request: name, insideRun: true });
    }
    expect(answered.find((done) => done.request === 'getStatus')?.answer).toBe(inner.answers.getStatus);
    expect(ran.find((call) => call.request === 'fetchResult')?.args).toEqual(['t-fetch', signal, 'completed']);
  });

  it('reports a failure to failed and rejects the caller with the same error', async () => {
    const inner = new RecordingWire();
    inner.failing = new WireFailure('lost', 'no answer');
    const failed: [WireRequestName, unknown][] = [];
    const wrapped = wrapWireRequests(inner, {
      answered: () => expect.unreachable('nothing answered'),
      failed: (call, error) => failed.push([call.request, error]),
    });
    for (const name of WIRE_REQUESTS) await expect(CALLS[name](wrapped)).rejects.toBe(inner.failing);
    expect(failed).toEqual(WIRE_REQUESTS.map((name) => [name, inner.failing]));
  });

  it('a throw in answered rejects the request with it (a listener that breaks is seen)', async () => {
    const broken = new Error('listener broke');
    const wrapped = wrapWireRequests(new RecordingWire(), {
      answered: () => {
        throw broken;
      },
      failed: () => expect.unreachable('the adapter answered'),
    });
    await expect(wrapped.getStatus('t-1')).rejects.toBe(broken);
  });

  it('passes every other member through, bound to the wire', async () => {
    const inner = new RecordingWire();
    const wrapped = wrapWireRequests(inner, {});
    expect([wrapped.wire, wrapped.version, wrapped.plainOnly, wrapped.answersEventInput]).toEqual([
      'mcp-tasks-ext',
      '9.9.9',
      false,
      true,
    ]);
    // Called through the proxy: with the proxy as `this`, the private field would throw.
    const heard: string[] = [];
    wrapped.onClose!((reason) => heard.push(reason));
    wrapped.watchTask!('t-watch')();
    wrapped.watchLogs!('t-logs')();
    expect(heard).toEqual(['closed by 9.9.9']);
    expect(wrapped.session!()).toEqual({ id: 's-9.9.9', protocolVersion: '2025-11-25' });
    expect(inner.calls).toEqual([
      ['watchTask', ['t-watch']],
      ['watchLogs', ['t-logs']],
    ]);
    await wrapped.close();
    expect(inner.closed).toBe(1);
    // A detached request works too: the wrapper never relies on `this`.
    // eslint-disable-next-line @typescript-eslint/unbound-method -- detached on purpose
    const { getStatus } = wrapped;
    await expect(getStatus('t-1')).resolves.toBe(inner.answers.getStatus);
  });

  it('a request the wire lacks stays absent', () => {
    const inner = new RecordingWire();
    const bare: ClientWire = {
      wire: inner.wire,
      version: inner.version,
      submit: inner.submit.bind(inner),
      lookupKey: inner.lookupKey.bind(inner),
      getStatus: inner.getStatus.bind(inner),
      fetchResult: inner.fetchResult.bind(inner),
      cancel: inner.cancel.bind(inner),
      sendInput: inner.sendInput.bind(inner),
      close: inner.close.bind(inner),
    };
    const wrapped = wrapWireRequests(bare, { answered: () => undefined });
    for (const absent of ['events', 'logs', 'onClose', 'watchTask']) {
      expect(Reflect.get(wrapped, absent), absent).toBeUndefined();
      expect(absent in wrapped, absent).toBe(false);
    }
    expect('submit' in wrapped).toBe(true);
  });
});
