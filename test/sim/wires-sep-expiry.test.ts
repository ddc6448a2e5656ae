/**
 * SEP-1391 key lookups after the retention ended, on the real SEP-1391 server adapter on virtual
 * time (the simulation's server host). Found by the simulation over SEP-1391: the lookup of an
 * expired operation's key answered `invalid_token`, which the client reads as the proof that the
 * call never created anything (S6), so the executor submitted it again and the tool ran twice.
 */
import { ProtocolError } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { VirtualClock } from '../../src/sim/clock.js';
import { newServerFacts } from '../../src/sim/server/facts.js';
import { SimServer } from '../../src/sim/server/host.js';
import { SIM_TOOL } from '../../src/sim/server/tools.js';
import { sfc32 } from '../../src/sim/random.js';
import { settle } from '../../src/sim/settle.js';
import { Trace } from '../../src/sim/trace.js';

const idle = { signal: new AbortController().signal, send: () => Promise.reject(new Error('no stream')) };

async function reasonOf(call: Promise<unknown>): Promise<unknown> {
  try {
    await call;
    return 'answered';
  } catch (error) {
    expect(error).toBeInstanceOf(ProtocolError);
    return ((error as ProtocolError).data as { reason?: unknown } | undefined)?.reason;
  }
}

describe('SEP-1391 token lookups after the retention (S6, S7, L-14)', () => {
  it('an expired operation answers operation_expired by its key; a key never used answers invalid_token', async () => {
    const clock = new VirtualClock();
    const server = await SimServer.open({
      clock,
      random: sfc32(1, 'server'),
      trace: new Trace(() => clock.now(), false),
      facts: newServerFacts(),
      backend: 'memory',
      hooks: { lastStep: () => {} },
      asyncClient: true,
    });
    const quiet = { inFlight: () => server.counter.inFlight };
    const call = (method: string, params: Record<string, unknown>) =>
      server.dispatchLegacy(method, params, 'alice', idle);
    const args = { op: 'x', steps: 1, stepMs: 10, ask: false, fail: false, size: 1 };
    const token = 'k'.repeat(32);
    await call('tools/call', { name: SIM_TOOL, arguments: args, operation: { token, keepAlive: 1 } });
    // Run the task to completion, then past its 1 s retention (no read grace follows keepAlive, S7).
    const until = clock.now() + 5_000;
    await settle(quiet);
    while (clock.peek() !== null && (clock.peek() as number) <= until) {
      clock.fireNext();
      await settle(quiet);
    }
    expect(await reasonOf(call('tools/async/status', { token }))).toBe('operation_expired');
    expect(await reasonOf(call('tools/async/status', { token: 'n'.repeat(32) }))).toBe('invalid_token');
    await server.close();
  });
});
