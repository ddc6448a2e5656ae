/**
 * V8 `.cpuprofile` summaries for the bench: self time by where the code lives (ours, the SDK, zod,
 * undici, node:http, SQLite, GC, ...) and the top functions, idle and module loading left out.
 */
import { readFileSync } from 'node:fs';

const fmt = (n: number, digits = 2): string => n.toLocaleString('en-US', { maximumFractionDigits: digits });

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
}

/** What a function's file says about who runs it. */
function categoryOf(url: string, name: string): string {
  if (name === '(garbage collector)') return 'GC';
  if (/^compile|^prepareExecution|^loadESM|^(import|require)Module/.test(name) || url.includes('internal/modules/')) {
    return 'startup';
  }
  if (url.includes('abort_controller') || name === 'DOMException') return 'AbortController / DOMException';
  if (name === '(idle)') return 'idle';
  if (name === '(program)') return '(program: native, not attributed)';
  if (url.includes('better-sqlite3')) return 'SQLite (better-sqlite3)';
  if (url.includes('@modelcontextprotocol')) return 'SDK';
  if (url.includes('/zod/')) return 'zod';
  if (url.includes('undici') || url.includes('internal/deps/undici') || url.includes('node:internal/webstreams')) {
    return 'web Request/Response (undici)';
  }
  if (url.includes('_http_') || url.includes('node:http') || url.includes('node:internal/http')) return 'node:http';
  if (url.includes('node:net') || url.includes('stream_base') || url.includes('node:internal/streams'))
    return 'sockets, streams';
  if (url.includes('terminus-bench') || url.includes('/src/')) return 'ours (bundled src/)';
  if (url === '') return 'native / builtins';
  return 'other node internals';
}

/** Self time by category and the top functions, from a V8 `.cpuprofile`, idle left out of the shares. */
export function summarizeProfile(path: string, requests: number, clients: number): string {
  const profile = JSON.parse(readFileSync(path, 'utf8')) as {
    nodes: ProfileNode[];
    samples: number[];
    timeDeltas: number[];
  };
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const selfUs = new Map<number, number>();
  profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));
  const categories = new Map<string, number>();
  const functions = new Map<string, number>();
  let busy = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id)!;
    const category = categoryOf(node.callFrame.url, node.callFrame.functionName);
    categories.set(category, (categories.get(category) ?? 0) + us);
    if (category === 'idle' || category === 'startup') continue;
    busy += us;
    const file = node.callFrame.url.split('/').slice(-2).join('/');
    const key = `${node.callFrame.functionName || '(anonymous)'} ${file}:${node.callFrame.lineNumber + 1}`;
    functions.set(key, (functions.get(key) ?? 0) + us);
  }
  const lines = [
    `CPU profile ${path}: ${fmt(busy / 1000, 0)} ms busy for ${requests} tasks/get at ${clients} clients, ` +
      `${fmt(busy / requests, 0)} us each (idle and startup left out)`,
    '',
    '| where | share of busy CPU |',
    '| --- | --- |',
  ];
  for (const [category, us] of [...categories].sort((a, b) => b[1] - a[1])) {
    if (category === 'idle' || category === 'startup') continue;
    lines.push(`| ${category} | ${fmt((100 * us) / busy, 1)} % |`);
  }
  lines.push('', '| top functions (self time) | share |', '| --- | --- |');
  for (const [name, us] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, 20)) {
    lines.push(`| \`${name}\` | ${fmt((100 * us) / busy, 1)} % |`);
  }
  return lines.join('\n');
}
