/**
 * `mcp-terminus/testing`: the conformance suites a backend runs to prove it keeps the contract.
 * This entry imports `vitest` (describe/it/expect): install vitest as a devDependency to use it.
 * @packageDocumentation
 */
export { describeTaskStore } from './testing/task-store-suite.js';
export type { DescribeTaskStoreOptions } from './testing/context.js';
export { describeLedger } from './testing/ledger-suite.js';
