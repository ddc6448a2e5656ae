/** One simulated executor process, as the series drives it (real executor or the hookable interpreter). */
export interface SimClient {
  readonly alive: boolean;
  submit(callNodeId: string, tool: string, args: Record<string, unknown>): Promise<void>;
  /** Takes up every in-flight operation of the ledger (after a crash). */
  resume(): Promise<void>;
  /** The caller's cancel; resolves `applied` or why not. */
  cancel(callNodeId: string): Promise<string>;
  /** C9: the caller goes away; local waiting stops. */
  detach(callNodeId: string): Promise<void>;
  reattach(callNodeId: string): Promise<void>;
  /** A crash: nothing of this process runs again. */
  kill(): void;
}
