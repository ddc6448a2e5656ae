/** The pure codec of the AIP-151 wire, for tests and the executor's adapter. */
export { decodeDuration, decodeFilter, decodeListQuery, decodeOperationSegment, decodeRunBody } from './decode.js';
export { encodeListOperations, encodeMetadata, encodeOperation, operationName } from './encode.js';
export type { OperationJson, RpcStatusJson, TaskMetadataJson } from './encode.js';
