import type { TaskStore } from '../../store/port.js';
import { LEGACY_PRINCIPAL_PREFIX } from '../owner.js';

/** What became of the tasks stored under `auth:<clientId>`, the owner name before principals named their source. */
export interface LegacyOwnerReport {
  /** Tasks whose owner is now `<to><clientId>`. */
  readonly adopted: number;
  /** Tasks still under `auth:<clientId>`: no built-in hook names that owner, so no caller reaches them. */
  readonly left: number;
  /** The prefix they were given (`token:`, `jwt:<issuer>#`), or null when none was. */
  readonly to: string | null;
}

/**
 * Gives the tasks stored under `auth:<clientId>` (and their submission keys) to the source that
 * created them, `to` being its prefix: `token:` for `createBearerAuth`, `jwtPrincipal(issuer, '')`
 * for `createJwtAuth`. A task is never given to a source that did not have it: with one source
 * configured the old names can only be its own; with two, `auth:alice` could be either, so pass
 * `to` only when you know which (else null: they are counted and left). Run it once at start, before
 * serving; it is idempotent. A hook of your own that names no principal still owns `auth:<clientId>`:
 * do not run this for it.
 * @example
 * const report = await adoptLegacyOwners(store, 'token:'); // { adopted: 12, left: 0, to: 'token:' }
 */
export async function adoptLegacyOwners(store: TaskStore, to: string | null): Promise<LegacyOwnerReport> {
  const adopted = to === null ? 0 : await store.renameOwners(LEGACY_PRINCIPAL_PREFIX, to);
  const left = await store.countOwners(LEGACY_PRINCIPAL_PREFIX);
  return { adopted, left, to };
}
