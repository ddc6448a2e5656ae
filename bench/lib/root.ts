import { fileURLToPath } from 'node:url';

/** The repository root: servers are spawned from here so packages and tsx resolve. */
export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
