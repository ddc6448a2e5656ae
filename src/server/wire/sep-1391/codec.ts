/** The pure codec of the SEP-1391 wire, for tests and the executor's adapter. */
export { decodeAsyncCall, decodeTokenRef } from './decode.js';
export { encodeAccepted, encodeResult, encodeStatus, projectStatus, tokenOf } from './encode.js';
export type { AsyncStatus } from './encode.js';
