import { keyOf, type MemoryState } from './state.js';

export function countOwners(state: MemoryState, prefix: string): number {
  let n = 0;
  for (const task of state.tasks.values()) if (task.owner.startsWith(prefix)) n++;
  return n;
}

/** As the SQL stores: tasks first, skipping those whose new owner holds their key; then the keys. */
export function renameOwners(state: MemoryState, from: string, to: string): number {
  if (from === '') throw new RangeError('an owner prefix must not be empty');
  const renamed = (owner: string): string => to + owner.slice(from.length);
  let count = 0;
  for (const [id, task] of state.tasks) {
    if (!task.owner.startsWith(from)) continue;
    const owner = renamed(task.owner);
    if (task.submissionKey !== null && state.keys.has(keyOf(owner, task.submissionKey))) continue;
    state.tasks.set(id, { ...task, owner });
    count++;
  }
  for (const [key, taskId] of [...state.keys]) {
    const [owner = '', submissionKey = ''] = key.split('\u0000');
    if (!owner.startsWith(from)) continue;
    const moved = keyOf(renamed(owner), submissionKey);
    if (state.keys.has(moved)) continue;
    state.keys.delete(key);
    state.keys.set(moved, taskId);
    const burned = state.burnedAt.get(key);
    if (burned !== undefined) {
      state.burnedAt.delete(key);
      state.burnedAt.set(moved, burned);
    }
  }
  return count;
}
