/**
 * The one table of what the model is told in each local state (src/bridge/end-states.ts): every
 * state is worded; every state that ended without a result to wait for says what happened (from the
 * evidence), that waiting will not change it, and what to do; none says it is still running.
 */
import { describe, expect, it } from 'vitest';
import { LOCAL_STATES, type Evidence, type LocalState } from '../../src/executor/operation.js';
import { endOf, endText, STATE_WORDING } from '../../src/bridge/end-states.js';
import type { Receipt } from '../../src/executor/ledger-port.js';
import { fresh, T0 } from '../executor/fixtures.js';

const evidence = (kind: Evidence['kind'], detail: string): Evidence => ({ at: T0 + 1, kind, detail });

const CASES: Partial<Record<LocalState, { evidence: Evidence[]; says: RegExp[]; receipt?: Partial<Receipt> }>> = {
  UNKNOWN: {
    evidence: [
      evidence('terminal_status_changed', 'server reported failed after completed'),
      evidence('key_lookup_unsupported', 'reconciliation lookup unsupported'),
    ],
    says: [/outcome is unknown/, /contradicted themselves/, /server reported failed after completed/, /submission key/],
  },
  NEVER_CREATED: {
    evidence: [evidence('submit_rejected', '-32602: invalid arguments')],
    says: [/never ran/, /did not create it/, /-32602: invalid arguments/, /starts a new operation/],
  },
  EXPIRED_WITH_RECEIPT: {
    evidence: [],
    receipt: { status: 'expired', payload: { observedStatus: 'completed' } },
    says: [/it reported completed/, /result expired/, /result is lost/, /ask the user first/],
  },
  EFFECT_RECONCILIATION_REQUIRED: {
    evidence: [evidence('late_completion', 'completed after the cancel was confirmed')],
    says: [/was cancelled/, /may have had effects/, /completed after the cancel was confirmed/, /operator/],
  },
};

describe('what the model is told in each local state', () => {
  it('words every local state, and only the ones that cannot end by waiting as ended', () => {
    expect(Object.keys(STATE_WORDING).sort()).toEqual([...LOCAL_STATES].sort());
    const ended = LOCAL_STATES.filter((s) => endOf(s) !== null).sort();
    expect(ended).toEqual(Object.keys(CASES).sort());
  });

  for (const [state, c] of Object.entries(CASES) as [LocalState, NonNullable<(typeof CASES)[LocalState]>][]) {
    it(`${state}: what happened, that waiting will not change it, what to do; never "still running"`, () => {
      const op = { ...fresh(), id: 'op_x', state, evidence: c.evidence };
      const receipt = c.receipt === undefined ? null : ({ ...c.receipt } as Receipt);
      const text = endText(endOf(state)!, { op, tool: 'report', receipt });
      expect(text).toMatch(/^report \(operation op_x\)/);
      expect(text).not.toMatch(/still running|goes on|wait for the result|again later|check again/i);
      expect(text).toMatch(/waiting will not/i);
      expect(text).toContain('terminus ops show op_x');
      for (const says of c.says) expect(text).toMatch(says);
    });
  }
});
