/**
 * The host-facing tool list: every upstream's tools under one name each. With one upstream a tool
 * keeps its own name; with several (or when it would shadow a `terminus_*` tool) it is
 * `<upstream>__<tool>`. Upstream names have no `_` (checked by `createBridge`), so the first `__`
 * splits any exposed name unambiguously: two upstream tools can never share an exposed name.
 *
 * Each upstream's listing has a deadline: one that does not answer in time (or fails) is left out
 * of the answer, or answered from its last good listing, and named as missing; its listing goes on
 * in the background (one at a time per upstream) and the next list shows it again once it answered.
 */
import { digestOf } from '../core/digest.js';
import type { Clock, Logger } from '../core/ports.js';
import type { RefusedTool, Upstream, UpstreamTool } from './upstream.js';

export interface CatalogEntry {
  readonly exposed: string;
  readonly upstream: Upstream;
  readonly tool: UpstreamTool;
}

/** An upstream the last listing could not read, and why. */
export interface MissingUpstream {
  readonly upstream: string;
  /** `no answer to tools/list within 5 s`, or the failure (connection refused, ...). */
  readonly reason: string;
  /** Its tools are listed from its last good listing (they may be out of date). */
  readonly cached: boolean;
}

/** Upstream names: letters, digits and `-`, 1-32 characters. */
export const UPSTREAM_NAME = /^[A-Za-z0-9-]{1,32}$/;
export const MODEL_TOOL_PREFIX = 'terminus_';

/**
 * Default deadline of one upstream's `tools/list` (ms): an upstream that answers at all answers a
 * listing in well under a second on one machine; 5 s leaves room for a cold `npx` start and keeps
 * a host's list (SDK timeout 60 s) short when one upstream hangs.
 */
export const DEFAULT_LIST_DEADLINE_MS = 5_000;

export interface CatalogOptions {
  readonly clock: Clock;
  readonly logger: Logger;
  /** Deadline of each upstream's listing (ms); default `DEFAULT_LIST_DEADLINE_MS`. */
  readonly listDeadlineMs?: number;
}

const OVERDUE = Symbol('overdue');

/**
 * How long a list waits for an upstream it has a listing of (ms): an upstream that answers at all
 * answers well within it; one that stalls costs the list this, not its whole deadline.
 */
export const CACHED_GRACE_MS = 1_000;

export class Catalog {
  private readonly upstreams: readonly Upstream[];
  private readonly clock: Clock;
  private readonly logger: Logger;
  readonly deadlineMs: number;
  private entries = new Map<string, CatalogEntry>();
  /** Each upstream's last good listing. */
  private readonly cache = new Map<string, CatalogEntry[]>();
  /** Each upstream's listing in flight: a later list joins it instead of sending another. */
  private readonly inFlight = new Map<string, Promise<CatalogEntry[] | Error>>();
  /** Upstreams whose last listing failed or missed its deadline, with why. */
  private readonly missingNow = new Map<string, string>();
  private readonly changedListeners = new Set<(upstream: string) => void>();
  /** What was last said about each upstream's refused tools. */
  private readonly refusedSaid = new Map<string, string>();

  constructor(upstreams: readonly Upstream[], options: CatalogOptions) {
    this.upstreams = upstreams;
    this.clock = options.clock;
    this.logger = options.logger;
    this.deadlineMs = options.listDeadlineMs ?? DEFAULT_LIST_DEADLINE_MS;
  }

  exposedName(upstream: string, tool: string): string {
    return this.upstreams.length > 1 || tool.startsWith(MODEL_TOOL_PREFIX) ? `${upstream}__${tool}` : tool;
  }

  /** Called when an upstream's tools change, or it answers again after it was missing. */
  onChanged(listener: (upstream: string) => void): () => void {
    this.changedListeners.add(listener);
    return () => this.changedListeners.delete(listener);
  }

  /** The upstreams the last listing could not read, and why. */
  get missing(): MissingUpstream[] {
    return [...this.missingNow].map(([upstream, reason]) => ({ upstream, reason, cached: this.cache.has(upstream) }));
  }

  /** Lists every upstream again, each within the deadline; a missing one is named (and its cache kept). */
  async refresh(): Promise<CatalogEntry[]> {
    const lists = await Promise.all(this.upstreams.map((upstream) => this.listOne(upstream)));
    this.entries = new Map(lists.flat().map((entry) => [entry.exposed, entry]));
    return [...this.entries.values()];
  }

  /** The entry of an exposed name; lists again once when it is not known yet. */
  async find(exposed: string): Promise<CatalogEntry | undefined> {
    return this.entries.get(exposed) ?? (await this.refresh(), this.entries.get(exposed));
  }

  /**
   * Null when `upstream` answers (its last listing did, or one now does within the deadline); else
   * why not. A call of its tool is refused before anything is sent while it does not: at once while
   * its overdue listing is still unanswered, else after one more listing within the deadline.
   */
  async unanswered(upstream: Upstream, withinMs = this.deadlineMs): Promise<string | null> {
    const why = this.missingNow.get(upstream.name);
    if (why === undefined) return null;
    if (this.inFlight.has(upstream.name)) return why;
    await this.listOne(upstream, withinMs);
    return this.missingNow.get(upstream.name) ?? null;
  }

  private async listOne(upstream: Upstream, withinMs = this.deadlineMs): Promise<CatalogEntry[]> {
    const name = upstream.name;
    let pending = this.inFlight.get(name);
    // Missing, its overdue listing still unanswered: the answer is the cache now, not another deadline.
    if (pending !== undefined && this.missingNow.has(name)) return this.cache.get(name) ?? [];
    if (pending === undefined) {
      pending = this.startListing(upstream);
      this.watchDeadline(name, pending);
    }
    const cached = this.cache.get(name);
    // With a listing to fall back on, a slow answer is not waited for long: the cache answers after
    // the grace, and the upstream is named missing only when its deadline passes (`watchDeadline`).
    const waitMs = cached === undefined ? withinMs : Math.min(withinMs, CACHED_GRACE_MS);
    const stop = new AbortController();
    const overdue = this.clock.sleep(waitMs, stop.signal).then(
      () => OVERDUE,
      () => OVERDUE,
    );
    const outcome = await Promise.race([pending, overdue]);
    stop.abort();
    if (Array.isArray(outcome)) return outcome;
    if (outcome !== OVERDUE) this.markMissing(name, String(outcome));
    else if (waitMs === withinMs) this.markMissing(name, `no answer to tools/list within ${withinMs / 1000} s`);
    return cached ?? [];
  }

  /** One `tools/list` of `upstream` (all its pages), kept in flight for later lists to join. */
  private startListing(upstream: Upstream): Promise<CatalogEntry[] | Error> {
    const name = upstream.name;
    const pending = upstream.tools().then(
      ({ tools, refused }) => {
        this.noteRefused(name, refused);
        const entries = tools.map((tool) => ({ exposed: this.exposedName(name, tool.name), upstream, tool }));
        const before = this.cache.get(name);
        this.cache.set(name, entries);
        const back = this.missingNow.delete(name);
        if (back) this.logger.warn('upstream answers its tool listing again', { upstream: name });
        // A host that listed while it was missing, or before its tools changed, lists again.
        const changed =
          before !== undefined && digestOf(before.map((e) => e.tool.listed)) !== digestOf(tools.map((t) => t.listed));
        if (back || changed) for (const listener of this.changedListeners) listener(name);
        return entries;
      },
      (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
    );
    this.inFlight.set(name, pending);
    void pending.finally(() => {
      if (this.inFlight.get(name) === pending) this.inFlight.delete(name);
    });
    return pending;
  }

  /** Names the upstream missing if its listing is still unanswered when the deadline passes. */
  private watchDeadline(name: string, pending: Promise<unknown>): void {
    const answered = new AbortController();
    void pending.finally(() => answered.abort());
    this.clock.sleep(this.deadlineMs, answered.signal).then(
      () => {
        if (this.inFlight.get(name) === pending) {
          this.markMissing(name, `no answer to tools/list within ${this.deadlineMs / 1000} s`);
        }
      },
      () => undefined,
    );
  }

  /** Says once which of an upstream's tools are left out, and why (again only when that changes). */
  private noteRefused(name: string, refused: readonly RefusedTool[]): void {
    const said = JSON.stringify(refused);
    if (this.refusedSaid.get(name) === said) return;
    this.refusedSaid.set(name, said);
    for (const tool of refused) {
      this.logger.warn('upstream tool left out of the list', { upstream: name, tool: tool.name, why: tool.why });
    }
  }

  private markMissing(name: string, reason: string): void {
    const before = this.missingNow.get(name);
    this.missingNow.set(name, reason);
    if (before === reason) return;
    const cached = this.cache.get(name)?.length;
    this.logger.warn('upstream missing from the tool list', {
      upstream: name,
      reason,
      ...(cached === undefined ? {} : { cachedTools: cached }),
    });
  }
}
