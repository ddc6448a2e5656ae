import { readFile } from 'node:fs/promises';
import { totalmem } from 'node:os';

/** The heap a worker process gets at least, whatever the machine: a handler importing zod and an SDK needs ~60 MB. */
export const MIN_WORKER_HEAP_MB = 256;
/** The default heap's ceiling: a task that needs more names it (`heapMb`, `--worker-heap-mb`). */
export const MAX_DEFAULT_WORKER_HEAP_MB = 2048;

/** The machine's memory as a process may use it: the cgroup limit when there is one, else RAM. */
export function machineMemoryBytes(): number {
  const total = totalmem();
  // Node reports 2^64 (or 0) when no cgroup limit applies.
  const constrained = process.constrainedMemory?.() ?? 0;
  return constrained > 0 && constrained < total ? constrained : total;
}

/**
 * The default JS heap limit of each of `count` worker processes, in MB: half the machine's memory
 * (`machineMemoryBytes`) shared by the workers is each one's resident budget (`memoryMb`), and half
 * of that its heap, the rest being for Buffers, ArrayBuffers and the process itself. Clamped to
 * 256..2048 MB. On this project's 24 GB, 2-core machine with 2 workers: 2048 (the cap); on a 2 GB
 * VM with 2 workers: 256; a 1 GB container with 4 workers gets the floor, 256, and is overcommitted.
 */
export function defaultWorkerHeapMb(count: number, memoryBytes = machineMemoryBytes()): number {
  const perWorkerMb = memoryBytes / 2 / Math.max(1, count) / (1024 * 1024);
  return Math.round(Math.min(MAX_DEFAULT_WORKER_HEAP_MB, Math.max(MIN_WORKER_HEAP_MB, perWorkerMb / 2)));
}

/**
 * The default resident memory limit of a worker process for a heap limit: twice the heap, and at
 * least the heap plus 256 MB (a worker's young generation, code and the node runtime take ~100 MB
 * besides its heap; a small heap needs the room to reach its own limit first).
 */
export function defaultWorkerMemoryMb(heapMb: number): number {
  return heapMb + Math.max(heapMb, 256);
}

/** Whether this platform lets the pool read a worker's resident memory (`/proc`, Linux). */
export const CAN_READ_MEMORY = process.platform === 'linux';

/**
 * The anonymous resident memory of process `pid` in bytes (`RssAnon` of `/proc/<pid>/status`:
 * heap, Buffers, ArrayBuffers, stacks; not the shared pages of the node binary), or null when it
 * cannot be read (not Linux, the process is gone).
 */
export async function residentBytes(pid: number): Promise<number | null> {
  if (!CAN_READ_MEMORY) return null;
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /^RssAnon:\s+(\d+) kB/m.exec(status) ?? /^VmRSS:\s+(\d+) kB/m.exec(status);
    return kb === null ? null : Number(kb[1]) * 1024;
  } catch {
    return null;
  }
}
