/**
 * Seeds the 100,000-series gate failed on before their fixes: each replays clean now. They lie past
 * the 10,000 seeds `.ci/run` gates, so they are kept here by number. Below them, the seeds the
 * 10,000-series gates of the other wires failed on, replayed on their wire.
 */
import { describe, expect, it } from 'vitest';
import { FAULT_CLASSES } from '../../src/sim/faults.js';
import { MISBEHAVIOURS } from '../../src/sim/network/misbehave.js';
import { LIVENESS_BOUND_MS, runSeries } from '../../src/sim/series.js';
import type { SimWireName } from '../../src/sim/wires/index.js';

const FOUND = [
  // liveness: a cancel resend owed after a 404 and a key lookup was taken for one still on the wire.
  { seed: 10044, broke: 'liveness' },
  // C6: a status read queued for a QPS token went out after a Retry-After that arrived meanwhile.
  { seed: 10534, broke: 'C6' },
  { seed: 12710, broke: 'C6' },
  { seed: 44639, broke: 'C6' },
  // C6: each 404 and key lookup read the status again before fetching: 6 reads within one second.
  { seed: 36362, broke: 'C6' },
  // C6: pushes whose status differed from the last read (input replays, a late or rewritten
  // terminal) each brought a status read forward to now, 50-190 ms after the previous one, and the
  // result read followed: 6 reads within one second. Every status read now waits for the
  // operation's one-second window (`statusReadWindowOpensAt`).
  { seed: 28084, broke: 'C6' },
  { seed: 29927, broke: 'C6' },
  { seed: 82675, broke: 'C6' },
  // C10: a resume after a detach asked the approval gate again while the first ask was still open.
  { seed: 80158, broke: 'C10' },
  // C12: a waiter whose budget ran out while a plain call ran, then the canceller's attach: taken up
  // as after a restart (UNKNOWN plain_call_lost) and the live process dropped the synchronous answer.
  { seed: 27292, broke: 'C12' },
  { seed: 46091, broke: 'C12' },
  { seed: 70307, broke: 'C12' },
  { seed: 71522, broke: 'C12' },
  // C10: a waiter re-attached after a detach at the same millisecond as a resume's status read (the
  // wake due now runs as the next step) sent a second read while the first was on the wire: its
  // input_required answer opened the round again (approval asked twice), its send waited for a token
  // until the first answer had paused polling (18026); or only the latter (71076).
  { seed: 18026, broke: 'C10' },
  { seed: 71076, broke: 'C10' },
  // From the 1,000,000-series run's first 400,000 series. C11: a later waiter joined while the
  // first still waited on an input reply lost to a server crash; its resend, cut short to the old
  // deadline, was taken for the bare deadline and disarmed, so the reply was never resent.
  { seed: 117965, broke: 'C11' },
  { seed: 218875, broke: 'C11' },
  { seed: 252975, broke: 'C11' },
  // From the first 400,000 series of the 1,000,000-series run. cancel cadence: a cancel-owed
  // operation answered not found went UNKNOWN, and its key lookups were lost to a server outage
  // (connection refused) or an executor crash; each lost one spent one of the 3 reconciling
  // lookups, so it was left for an operator and no request went out again (180-263 s).
  { seed: 168549, broke: 'cancel cadence' },
  { seed: 237087, broke: 'cancel cadence' },
  { seed: 296580, broke: 'cancel cadence' },
  { seed: 307973, broke: 'cancel cadence' },
  // From the 1,000,000-series run of 2026-12-01 (seeds 1-496,275). C6: the read window was kept per
  // driver, in memory. Two reads left from the executor that crashed at 586 ms (74 ms down), and
  // the driver of the process that took the operation up at 660 ms started with an empty window and
  // sent four more within the same second. A driver taking a record up from the ledger now counts
  // its window as full (`OperationDriver`'s `takenUp`).
  { seed: 467954, broke: 'C6' },
  // From the third 1,000,000-series run (seeds 1-100,000). C13: a key lookup showed the task completed with its result
  // inlined, and the status read still on the wire showed the same result; neither report was kept
  // (the lookup's sighting carried no digest, the late read was dropped as late), so the fetch's
  // changed result was accepted. Both are now reports compared with the first.
  { seed: 46469, broke: 'C13' },
  { seed: 70262, broke: 'C13' },
  // C13: after an executor crash two status reads were on the wire at once; one's 404 sent the
  // operation to UNKNOWN and the other's answer, the result, was dropped there as late.
  { seed: 93026, broke: 'C13' },
  { seed: 99518, broke: 'C13' },
  // C6: two status reads of a cancel on the wire; one was answered 429 with a Retry-After in the
  // millisecond the other left, before the 429's step was written to the record.
  { seed: 203394, broke: 'C6' },
  { seed: 212491, broke: 'C6' },
  // Cancel cadence (the checker): a task completed, then reported `cancelled` once its cancel was
  // asked; the executor listed it UNKNOWN for an operator with the C13 evidence and rightly sent
  // nothing more, and the checker still asked for a read every 10 s to the series end.
  { seed: 349967, broke: 'cancel cadence' },
  // cancel cadence: a 404 sent a cancel being confirmed to UNKNOWN while the caller was detached; the
  // key lookup was lost and no retry was armed (a detached doubt drove nothing), 11-15 s of silence
  // until the caller re-attached. Found by the fifth 1,000,000-series run.
  { seed: 720217, broke: 'cancel cadence' },
  { seed: 988501, broke: 'cancel cadence' },
];

describe('gate seeds from the 100,000- and 1,000,000-series runs', () => {
  for (const { seed, broke } of FOUND) {
    it(`seed ${seed} (${broke}) passes every invariant`, async () => {
      const outcome = await runSeries({ seed });
      expect(outcome.violations).toEqual([]);
    }, 60_000);
  }
});

/** `lies`: found with the server's lies told on the wire (the others were found before them). */
const ON_WIRES: { seed: number; wire: SimWireName; broke: string; lies?: true }[] = [
  // C6 (T-62): the 2025 adapter read the status again after -32602 on cancelling a terminal task,
  // at once, inside a Retry-After the server had just sent (our -32602 names the status in data).
  // (The SEP-1391 defect the simulation found, an expired operation's key answered as never
  // created, is pinned by test/sim/wires-sep-expiry.test.ts.)
  { seed: 10, wire: 'mcp-2025-11-25', broke: 'C6' },
  { seed: 82, wire: 'mcp-2025-11-25', broke: 'C6' },
  // liveness: the bound counted from before the expiry partition's end and the drops after it (two
  // lost result reads at the executor's 66 s back-off, past a 75 s partition): now from the last
  // fault healed, as LIVENESS_BOUND_MS says.
  { seed: 4401, wire: 'sep-1391', broke: 'liveness' },
  // liveness: a read misrouted to another, completed task counted as this task's first terminal
  // answer, so the result faults hit its real first one: the client never saw it terminal.
  { seed: 6443, wire: 'aip-151', broke: 'liveness' },
  // C6: a key lookup finding the task completed while a cancel was owed read the status again
  // before fetching (on AIP-151 the fetch is a status read too): 6 reads within one second.
  { seed: 8310, wire: 'aip-151', broke: 'C6' },
  // C13: a peer that rewrote a completed task to `cancelled` once it was cancelled. The side
  // channel's blocked tasks/result had received the completion; the status read after it (1892),
  // or on the wire when it came (1151), answered `cancelled` and was followed to a cancelled receipt.
  { seed: 1151, wire: 'mcp-2025-11-25', broke: 'C13', lies: true },
  { seed: 1892, wire: 'mcp-2025-11-25', broke: 'C13', lies: true },
  // C13: the same, with the completion held on the side channel while the caller was detached; the
  // executor died before reading again, and its successor followed the `cancelled` read.
  { seed: 6457, wire: 'mcp-2025-11-25', broke: 'C13', lies: true },
  // C6: a failed task's error from tasks/result was settled by one more tasks/get, 15 ms into a
  // Retry-After of 1,607 ms another read had heard; the executor had already seen it failed.
  { seed: 6438, wire: 'mcp-2025-11-25', broke: 'C6', lies: true },
  // C13: the AIP-151 adapter's status snapshot dropped the outcome a done Operation inlines, so a
  // result that changed between reads was accepted as the fetch read it (345 of the first 3,000
  // series once the lies were told on this wire).
  { seed: 11, wire: 'aip-151', broke: 'C13', lies: true },
  { seed: 20, wire: 'aip-151', broke: 'C13', lies: true },
  // events (the checker's, not the code's): a reader of a task left input_required by an
  // operation that ended otherwise still followed it at the end, and was flagged as stuck; a reader
  // short of done is stuck only when its task ended (72 of 10,000 series).
  { seed: 652, wire: 'mcp-2025-11-25', broke: 'events', lies: true },
  { seed: 332, wire: 'mcp-2025-11-25', broke: 'events', lies: true },
];

/**
 * The fault classes those wires drew from before the server's lies were told on them: a seed found
 * then replays its own series with them (a class not allowed takes no draw from the plan's stream).
 */
const BEFORE_LIES = FAULT_CLASSES.filter((f) => !(MISBEHAVIOURS as readonly string[]).includes(f));

describe('gate seeds from the 10,000-series runs of the other wires', () => {
  for (const { seed, wire, broke, lies } of ON_WIRES) {
    it(`${wire} seed ${seed} (${broke}) passes every invariant`, async () => {
      const outcome = await runSeries({ seed, wire, ...(lies ? {} : { faults: BEFORE_LIES }) });
      expect(outcome.violations).toEqual([]);
    }, 60_000);
  }

  it('aip-151 seed 6443: the read misrouted to a completed task does not spend its own first terminal answer', async () => {
    // The client sees its task completed at 16 s and the three truncations hit the fetches after it;
    // before, they hit the only reads that could show it and the series ran 189 s (virtual time).
    const outcome = await runSeries({ seed: 6443, wire: 'aip-151', faults: BEFORE_LIES });
    expect(outcome.violations).toEqual([]);
    expect(outcome.virtualMs).toBeLessThan(LIVENESS_BOUND_MS);
  }, 60_000);

  it('sep-1391 seed 161: a result read answered operation_expired after an expiry partition is the expired receipt, not UNKNOWN', async () => {
    // The operation failed at 4.5 s, the client was cut off for 75 s, and its keepAlive (60 s) ended
    // meanwhile. Before, the read answered `operation_expired` was taken as "not found before
    // expiry" and the operation stayed UNKNOWN until the series ended (175 s of doubt).
    const outcome = await runSeries({ seed: 161, wire: 'sep-1391', faults: BEFORE_LIES });
    expect(outcome.violations).toEqual([]);
    expect(outcome.statesReached.EXPIRED_WITH_RECEIPT).toBe(1);
    expect(outcome.metrics.unknownReconcileMs.every((ms) => ms < 60_000)).toBe(true);
  }, 60_000);
});
