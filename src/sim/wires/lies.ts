import type { FaultClass } from '../faults.js';

/**
 * The misbehaving-server classes (C13, `network/misbehave.ts`) are told on the Tasks-extension
 * wire only: on the other wires they are listed as not applied, with this reason, never skipped
 * in silence.
 */
export const LIES_ON_TASKS_EXT_ONLY: Readonly<Partial<Record<FaultClass, string>>> = Object.fromEntries(
  (['terminal_rewritten', 'result_changed', 'terminal_reverted', 'late_completion_shown'] as const).map((f) => [
    f,
    "not simulated on this wire yet: the server's lies (C13) are told on the Tasks-extension wire only",
  ]),
);

/** What only those lies reach: exempt from coverage where they are not told. */
export const REACHED_BY_LIES_ONLY: Readonly<Record<string, string>> = {
  EFFECT_RECONCILIATION_REQUIRED:
    'a correct server never reports a completion after a cancelled one; the misbehaving server that does is simulated on the Tasks-extension wire only',
};
