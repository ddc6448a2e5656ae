/**
 * The call node `terminus call` derives from its arguments: the mechanism lives with the executor
 * (`executor/call-node.ts`) so the simulation re-runs commands exactly as the CLI does.
 */
export { chooseCallNode, derivedCallNode, type CallNodeChoice } from '../executor/call-node.js';
