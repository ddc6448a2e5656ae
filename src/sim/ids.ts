import type { Ids } from '../core/ports.js';
import type { SimRandom } from './random.js';

/**
 * Deterministic `Ids`: task ids are 128 bits of the given stream, base64url (22 characters, the
 * same shape as production ids); other ids are `prefix_<n>` with a per-instance counter and a tag
 * naming the process, so two processes never mint the same id.
 */
export function simIds(random: SimRandom, tag: string): Ids {
  let n = 0;
  return {
    taskId: () => {
      const bytes = Buffer.alloc(16);
      for (let i = 0; i < 4; i++) bytes.writeUInt32BE(random.u32(), i * 4);
      return bytes.toString('base64url');
    },
    unique: (prefix) => `${prefix}_${tag}${++n}`,
  };
}
