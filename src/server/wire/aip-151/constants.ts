/** Names of the AIP-151 wire (google.longrunning over HTTP/JSON); one place for code, tests, docs. */

/** `Operation.name` prefix: default HTTP mapping `operations/{unique_id}` (G-19). */
export const OPERATION_PREFIX = 'operations/';

/** `@type` of `Operation.metadata` (G-04, G-22): our task view. */
export const METADATA_TYPE = 'type.googleapis.com/mcp_terminus.v1.TaskMetadata';
/** `@type` of `Operation.response`: the MCP `CallToolResult` of the tool. */
export const RESPONSE_TYPE = 'type.googleapis.com/mcp_terminus.v1.CallToolResult';
/** `@type` of a `google.rpc.Status` detail carrying the original JSON-RPC error of a failed task. */
export const JSONRPC_ERROR_TYPE = 'type.googleapis.com/mcp_terminus.v1.JsonRpcError';
/** `google.rpc.ErrorInfo`, the machine-readable reason on our HTTP errors (AIP-193). */
export const ERROR_INFO_TYPE = 'type.googleapis.com/google.rpc.ErrorInfo';
export const ERROR_DOMAIN = 'mcp-terminus.dev';

/** `ListOperations` page size when the request names none, and the most one page returns. */
export const DEFAULT_PAGE_SIZE = 50;
export const MAX_PAGE_SIZE = 1000;

/** `WaitOperation` timeout when the request names none, and the cap (G-27: best effort, bounded). */
export const DEFAULT_WAIT_MS = 30_000;
export const MAX_WAIT_MS = 300_000;

/** Longest AIP-155 `requestId` accepted; ids are opaque (UUIDs recommended), this only bounds storage. */
export const MAX_REQUEST_ID_LENGTH = 256;

/** `google.rpc.Code` values we use, with their canonical HTTP mapping. */
export const RPC_CODES = {
  OK: { code: 0, http: 200 },
  CANCELLED: { code: 1, http: 499 },
  UNKNOWN: { code: 2, http: 500 },
  INVALID_ARGUMENT: { code: 3, http: 400 },
  NOT_FOUND: { code: 5, http: 404 },
  ALREADY_EXISTS: { code: 6, http: 409 },
  RESOURCE_EXHAUSTED: { code: 8, http: 429 },
  FAILED_PRECONDITION: { code: 9, http: 400 },
  UNIMPLEMENTED: { code: 12, http: 501 },
  INTERNAL: { code: 13, http: 500 },
  UNAVAILABLE: { code: 14, http: 503 },
} as const;
export type RpcCodeName = keyof typeof RPC_CODES;
