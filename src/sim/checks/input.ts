/** What a finished series leaves for its checkers: the plan, the server, the ledger, the wire log. */
import type { Ledger } from '../../executor/ledger-port.js';
import type { LedgerFacts } from '../client/recording-ledger.js';
import type { FaultClass, FaultPlan } from '../faults.js';
import type { WireLog } from '../network/wire-log.js';
import type { ServerFacts } from '../server/facts.js';
import type { SimServer } from '../server/host.js';
import type { OperationPlan } from '../workload.js';
import type { SimWire } from '../wires/wire.js';

export interface CheckInput {
  readonly ops: readonly OperationPlan[];
  readonly plan: FaultPlan;
  readonly server: SimServer;
  readonly facts: ServerFacts;
  readonly ledger: Ledger;
  readonly ledgerFacts: LedgerFacts;
  readonly log: WireLog;
  readonly principal: string;
  /** Series start (the plan's process faults are timed from it) and end, virtual ms. */
  readonly start: number;
  readonly now: number;
  readonly fired: ReadonlyMap<FaultClass, number>;
  /** The wire of the series; its own rules where it has weaker guarantees. Default the Tasks extension. */
  readonly wire?: SimWire;
}
