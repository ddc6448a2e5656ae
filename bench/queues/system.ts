/**
 * One job queue under figure 12's workload (bench/queues/run.ts): create a job, have it claimed and
 * run by a 0 ms handler, completed, and its result read. Each system is the library as its own
 * documentation says to run it fast; `docs/benchmarks.md` (figure 12) names every setting.
 */

/** What the workload hands a system: where its tables go and how its handler reports. */
export interface SystemConfig {
  readonly url: string;
  /** A schema of its own, created by the system and dropped by the figure afterwards. */
  readonly schema: string;
  /** Called by the handler when it starts, in this process, with the job's key. */
  readonly started: (key: string) => void;
  /** Called by the handler just before it returns (the completion is not committed yet). */
  readonly ended: (key: string) => void;
}

export interface QueueSystem {
  /** Creates one job for `key`; resolves with its handle once the system has committed it. */
  add(key: string): Promise<string>;
  /**
   * One read of the job's outcome: the handler's start instant (wall-clock ms) when the system
   * reports it (ours over HTTP: the result carries it), null when done without one, undefined
   * while it is not done yet.
   */
  result(handle: string): Promise<number | null | undefined>;
  stop(): Promise<void>;
}

export type OpenSystem = (config: SystemConfig) => Promise<QueueSystem>;
