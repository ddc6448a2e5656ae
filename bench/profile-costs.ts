/**
 * `npx tsx bench/profile-costs.ts FILE.cpuprofile [REQUESTS] [--top 40] [--match REGEX]`: where a
 * V8 CPU profile's busy time went, by function, as self AND inclusive (total) time, so the cost
 * of one call tree (`fastAnswer`, `classifyInboundRequest`, `getTask`, `writeAnswer`, ...) reads
 * directly. Idle and module loading are left out. With REQUESTS, also microseconds per request.
 * Written for issue 14 (the fast path's CPU per `tasks/get`); `bench/task-get-http.ts --profile`
 * prints the self-time summary by category.
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: { readonly functionName: string; readonly url: string; readonly lineNumber: number };
  readonly children?: readonly number[];
}

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { top: { type: 'string', default: '40' }, match: { type: 'string' } },
});
const [file, requestsArg] = positionals;
if (file === undefined) throw new Error('usage: profile-costs.ts FILE.cpuprofile [REQUESTS]');
const requests = requestsArg === undefined ? undefined : Number(requestsArg);
const profile = JSON.parse(readFileSync(file, 'utf8')) as {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
};

const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map<number, number>();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);
const keyOf = (node: ProfileNode): string => {
  const where = node.callFrame.url.split('/').slice(-2).join('/');
  return `${node.callFrame.functionName || '(anonymous)'} ${where}:${node.callFrame.lineNumber + 1}`;
};
const skipped = (node: ProfileNode): boolean =>
  node.callFrame.functionName === '(idle)' ||
  /^compile|^(import|require)Module|^loadESM/.test(node.callFrame.functionName) ||
  node.callFrame.url.includes('internal/modules/');

const self = new Map<string, number>();
const total = new Map<string, number>();
let busy = 0;
profile.samples.forEach((id, i) => {
  const us = profile.timeDeltas[i] ?? 0;
  let node = byId.get(id);
  if (node === undefined || skipped(node)) return;
  // A sample inside module loading (anywhere on its stack) is startup, not serving.
  const stack: ProfileNode[] = [];
  while (node !== undefined) {
    if (skipped(node)) return;
    stack.push(node);
    const up = parent.get(node.id);
    node = up === undefined ? undefined : byId.get(up);
  }
  busy += us;
  self.set(keyOf(stack[0]!), (self.get(keyOf(stack[0]!)) ?? 0) + us);
  for (const key of new Set(stack.map(keyOf))) total.set(key, (total.get(key) ?? 0) + us);
});

const fmt = (n: number, digits = 1): string => n.toLocaleString('en-US', { maximumFractionDigits: digits });
const perRequest = (us: number): string => (requests === undefined ? '' : ` ${fmt(us / requests)} |`);
const top = Number(values.top);
const match = values.match === undefined ? undefined : new RegExp(values.match);
const out = [
  `${file}: ${fmt(busy / 1000, 0)} ms busy` +
    (requests === undefined ? '' : ` for ${requests} requests, ${fmt(busy / requests)} us each`),
  '',
  `| function | self % | total % |${requests === undefined ? '' : ' total us/request |'}`,
  `| --- | --- | --- |${requests === undefined ? '' : ' --- |'}`,
];
const rows = [...total]
  .filter(([key]) => match === undefined || match.test(key))
  .sort((a, b) => b[1] - a[1])
  .slice(0, top);
for (const [key, us] of rows) {
  out.push(`| \`${key}\` | ${fmt((100 * (self.get(key) ?? 0)) / busy)} | ${fmt((100 * us) / busy)} |${perRequest(us)}`);
}
process.stdout.write(`${out.join('\n')}\n`);
