/** The four wires the simulation drives, by name. */
import { aip151Sim } from './aip151.js';
import { rev2025Sim } from './rev2025.js';
import { sep1391Sim } from './sep1391.js';
import type { SimWireName } from './spec.js';
import { tasksExtSim } from './tasks-ext.js';
import type { SimWire } from './wire.js';

const WIRES: Readonly<Record<SimWireName, SimWire>> = {
  'mcp-tasks-ext': tasksExtSim,
  'mcp-2025-11-25': rev2025Sim,
  'sep-1391': sep1391Sim,
  'aip-151': aip151Sim,
};

export function simWire(name: SimWireName): SimWire {
  return WIRES[name];
}

export { SIM_WIRES, isSimWire, type SimWireName } from './spec.js';
export type { SimWire } from './wire.js';
