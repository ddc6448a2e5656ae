/**
 * The host-facing tool list: every upstream's tools under one name each. With one upstream a tool
 * keeps its own name; with several (or when it would shadow a `terminus_*` tool) it is
 * `<upstream>__<tool>`. Upstream names have no `_` (checked by `createBridge`), so the first `__`
 * splits any exposed name unambiguously: two upstream tools can never share an exposed name.
 */
import type { Logger } from '../core/ports.js';
import type { Upstream, UpstreamTool } from './upstream.js';

export interface CatalogEntry {
  readonly exposed: string;
  readonly upstream: Upstream;
  readonly tool: UpstreamTool;
}

/** Upstream names: letters, digits and `-`, 1-32 characters. */
export const UPSTREAM_NAME = /^[A-Za-z0-9-]{1,32}$/;
export const MODEL_TOOL_PREFIX = 'terminus_';

export class Catalog {
  private readonly upstreams: readonly Upstream[];
  private readonly logger: Logger;
  private entries = new Map<string, CatalogEntry>();
  /** Upstreams whose last listing failed, with why: a tool missing from them is "unreachable", not "unknown". */
  readonly unreachable = new Map<string, string>();

  constructor(upstreams: readonly Upstream[], logger: Logger) {
    this.upstreams = upstreams;
    this.logger = logger;
  }

  exposedName(upstream: string, tool: string): string {
    return this.upstreams.length > 1 || tool.startsWith(MODEL_TOOL_PREFIX) ? `${upstream}__${tool}` : tool;
  }

  /** Lists every upstream again. An upstream that cannot be reached is logged and left out. */
  async refresh(): Promise<CatalogEntry[]> {
    const lists = await Promise.all(
      this.upstreams.map(async (upstream) => {
        try {
          const tools = await upstream.tools();
          this.unreachable.delete(upstream.name);
          return tools.map((tool) => ({
            exposed: this.exposedName(upstream.name, tool.name),
            upstream,
            tool,
          }));
        } catch (error) {
          this.unreachable.set(upstream.name, String(error));
          this.logger.warn('upstream tools/list failed', { upstream: upstream.name, error: String(error) });
          return [];
        }
      }),
    );
    this.entries = new Map(lists.flat().map((entry) => [entry.exposed, entry]));
    return [...this.entries.values()];
  }

  /** The entry of an exposed name; lists again once when it is not known yet. */
  async find(exposed: string): Promise<CatalogEntry | undefined> {
    return this.entries.get(exposed) ?? (await this.refresh(), this.entries.get(exposed));
  }
}
