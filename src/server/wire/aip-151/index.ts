import type { WireAdapter } from '../adapter.js';
import { aipRoutes } from './routes.js';

/**
 * AIP-151 long-running operations (`google.longrunning.Operation` over HTTP/JSON), server side: no
 * MCP methods, only HTTP routes beside `/mcp` on the same port (reference section 3).
 */
export const aip151Wire: WireAdapter = {
  name: 'aip-151',
  eras: [],
  install() {},
  routes: aipRoutes,
};

export { OPERATION_PREFIX, METADATA_TYPE, RESPONSE_TYPE } from './constants.js';
export * as aip151Codec from './codec.js';
