import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClusterEffect } from '../../src/tools/cluster/index.js';
import { isTerminalStatus, rpc, type RpcAnswer } from '../server/helpers.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, PG_URL } from '../store/postgres-fixture.js';
import {
  build,
  eventually,
  exitCode,
  kill9,
  killAll,
  mapLimit,
  readEffects,
  runCli,
  startNode,
  type Node,
} from './nodes.js';

/**
 * Issue 6 end to end: three `terminus serve --db postgres://...` nodes of the built CLI on one
 * database, driven over the Tasks-extension wire (raw JSON-RPC) like a load balancer would spread
 * clients: any request to any node.
 */
const KEY_META = 'mcp-terminus.dev/submissionKey';
const TERMINAL = `('completed', 'failed', 'cancelled')`;

const range = (n: number, from = 0): number[] => Array.from({ length: n }, (_, i) => from + i);

interface Cluster {
  readonly schema: string;
  readonly cwd: string;
  readonly nodes: readonly Node[];
  readonly tasks: string;
}

/** Three nodes on a fresh schema, started together (so they race on the migrations too). */
async function startCluster(label: string): Promise<Cluster> {
  const schema = freshSchema(label);
  const cwd = mkdtempSync(join(tmpdir(), `terminus-${label}-`));
  const nodes = await Promise.all(range(3).map((i) => startNode({ id: `${label}-${i}`, db: PG_URL, schema, cwd })));
  return { schema, cwd, nodes, tasks: `"${schema}".tasks` };
}

async function submit(node: Node, tool: string, args: Record<string, unknown>, key?: string): Promise<RpcAnswer> {
  return rpc(
    node.url,
    'tools/call',
    { name: tool, arguments: args },
    key === undefined ? {} : { meta: { [KEY_META]: key } },
  );
}

async function submitTask(node: Node, tool: string, args: Record<string, unknown>): Promise<string> {
  const answer = await submit(node, tool, args);
  if (answer.result?.resultType !== 'task')
    throw new Error(`${node.id}: expected a task, got ${JSON.stringify(answer)}`);
  return answer.result.taskId as string;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- raw wire JSON
async function getTask(node: Node, taskId: string): Promise<any> {
  const answer = await rpc(node.url, 'tasks/get', { taskId });
  if (answer.error !== undefined) throw new Error(`${node.id} tasks/get ${taskId}: ${JSON.stringify(answer.error)}`);
  return answer.result;
}

function effectsOf(cwd: string, taskId: string, kind: ClusterEffect['kind']): ClusterEffect[] {
  return readEffects(cwd).filter((e) => e.taskId === taskId && e.kind === kind);
}

/** The node whose pid recorded that `taskId` started: the one holding it. */
async function holderOf(cluster: Cluster, taskId: string): Promise<Node> {
  const started = await eventually(`${taskId} started`, () => effectsOf(cluster.cwd, taskId, 'started')[0]);
  const holder = cluster.nodes.find((n) => n.pid === started.pid);
  if (holder === undefined) throw new Error(`task ${taskId} started in an unknown process ${started.pid}`);
  return holder;
}

if (PG_URL === '') {
  describe('cluster: three terminus serve nodes on one PostgreSQL', failWithoutDatabase);
} else {
  const admin = adminPool();
  const clusters: Cluster[] = [];

  beforeAll(() => build(), 180_000);
  afterAll(async () => {
    await killAll();
    for (const c of clusters) {
      await dropSchema(admin, c.schema);
      rmSync(c.cwd, { recursive: true, force: true });
    }
    await admin.end();
  });

  describe('failover: kill -9 of one node mid-run', () => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await startCluster('failover');
      clusters.push(cluster);
    }, 60_000);
    afterAll(() => killAll());

    it('every task ends completed exactly once, with the result of its highest epoch; only the dead node’s tasks re-run, from their checkpoints', async () => {
      const [victim, a, b] = cluster.nodes as [Node, Node, Node];
      const t = cluster.tasks;
      const STEPS = 5;
      const args = (i: number) => ({ steps: STEPS, stepMs: 100, label: `t${i}` });
      // The node ids are the lease owners, and the listening line names the database without its password.
      const password = new URL(PG_URL).password;
      if (password !== '') for (const n of cluster.nodes) expect(n.dbLabel).not.toContain(password);
      expect(existsSync(join(cluster.cwd, 'postgres:'))).toBe(false);

      const phases: string[] = [];
      let mark = Date.now();
      const phase = (name: string): void => {
        phases.push(`${name} ${Date.now() - mark} ms`);
        mark = Date.now();
      };
      // 210 tasks through all three nodes.
      const ids = await mapLimit(range(210), 12, (i) =>
        submitTask(cluster.nodes[i % 3] as Node, 'count_effects', args(i)),
      );
      // Mid-run: some tasks done, and the victim holding several.
      await eventually(
        'the victim holding tasks mid-run',
        async () => {
          const { rows } = await admin.query<{ done: number; held: number }>(
            `SELECT count(*) FILTER (WHERE status = 'completed')::int AS done,
                    count(*) FILTER (WHERE status = 'working' AND lease_owner = $1)::int AS held FROM ${t}`,
            [victim.id],
          );
          const row = rows[0];
          return row !== undefined && row.done >= 30 && row.held >= 5 ? true : undefined;
        },
        30_000,
        20,
      );
      phase('submit 210 + run to mid-run');
      const killedAt = Date.now();
      await kill9(victim.child);
      // A COMMIT the victim sent just before the kill still completes in its PostgreSQL backend
      // (a checkpoint read before it was one step stale: resumedFrom 2 against 1, at load 18), so
      // the rows are read once the victim's backends are gone.
      await eventually(
        "the victim's PostgreSQL backends gone",
        async () => {
          const { rows } = await admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name LIKE $1`,
            [`terminus ${victim.id}%`],
          );
          return rows[0]?.n === 0 ? true : undefined;
        },
        20_000,
        20,
      );
      // Dead now: nothing changes these rows until their leases expire and a survivor claims them.
      const orphans = (
        await admin.query<{ id: string; epoch: number; expires: number; checkpoint: { next: number } | null }>(
          `SELECT id, epoch, lease_expires_at::float8 AS expires, checkpoint FROM ${t}
           WHERE lease_owner = $1 AND status NOT IN ${TERMINAL}`,
          [victim.id],
        )
      ).rows;
      expect(orphans.length).toBeGreaterThanOrEqual(1);
      const orphanById = new Map(orphans.map((o) => [o.id, o]));

      // 90 more through the survivors while the orphans wait for their leases.
      ids.push(
        ...(await mapLimit(range(90, 210), 12, (i) => submitTask(i % 2 === 0 ? a : b, 'count_effects', args(i)))),
      );

      phase('kill + submit 90');
      const reclaimedAt = new Map<string, number>();
      await eventually(
        'every orphan re-claimed by a survivor',
        async () => {
          const { rows } = await admin.query<{ id: string; epoch: number }>(
            `SELECT id, epoch FROM ${t} WHERE id = ANY ($1)`,
            [orphans.map((o) => o.id)],
          );
          const now = Date.now();
          for (const row of rows) {
            if (row.epoch > (orphanById.get(row.id)?.epoch ?? Infinity) && !reclaimedAt.has(row.id)) {
              reclaimedAt.set(row.id, now);
            }
          }
          return reclaimedAt.size === orphans.length ? true : undefined;
        },
        40_000,
        50,
      );
      // S3: no survivor took a lease before it expired (observed after the claim, so never earlier).
      for (const o of orphans) expect(reclaimedAt.get(o.id)).toBeGreaterThanOrEqual(o.expires);
      const leaseLeft = Math.max(...orphans.map((o) => o.expires)) - killedAt;
      const failover = Math.max(...reclaimedAt.values()) - killedAt;
      console.info(
        `failover: ${orphans.length} orphans; lease left at kill <= ${leaseLeft} ms; ` +
          `all re-claimed ${failover} ms after kill -9`,
      );

      phase('orphans re-claimed');
      await eventually(
        'every task terminal',
        async () => {
          const { rows } = await admin.query<{ n: number }>(
            `SELECT count(*)::int AS n FROM ${t} WHERE status IN ${TERMINAL}`,
          );
          return rows[0]?.n === ids.length ? true : undefined;
        },
        40_000,
        200,
      );

      phase('all terminal');
      // No task lost, none extra, all completed (the table cannot take a terminal status back: S2).
      const rows = (
        await admin.query<{ id: string; status: string; epoch: number }>(`SELECT id, status, epoch FROM ${t}`)
      ).rows;
      expect(rows.map((r) => r.id).sort()).toEqual([...ids].sort());
      expect(rows.filter((r) => r.status !== 'completed')).toEqual([]);
      const epochOf = new Map(rows.map((r) => [r.id, r.epoch]));

      // The wire gives every task's one terminal answer on any survivor, wherever it ran; the
      // orphans and every tenth task are read on both and must read the same.
      const results = await mapLimit(ids, 16, async (id, i) => {
        const both = orphanById.has(id) || i % 10 === 0;
        const first = await getTask(i % 2 === 0 ? a : b, id);
        expect(first.status).toBe('completed');
        if (both) expect((await getTask(i % 2 === 0 ? b : a, id)).result).toEqual(first.result);
        return first.result.structuredContent as { epoch: number; pid: number; resumedFrom: number; steps: number };
      });

      phase('tasks/get of every task');
      const effects = readEffects(cluster.cwd).filter((e) => e.kind === 'effect');
      const perTask = new Map<string, ClusterEffect[]>();
      for (const e of effects) perTask.set(e.taskId, [...(perTask.get(e.taskId) ?? []), e]);
      let repeated = 0;
      ids.forEach((id, i) => {
        const result = results[i]!;
        const mine = perTask.get(id) ?? [];
        // The result is the highest epoch's, and no effect comes from a later one.
        expect(result.epoch).toBe(epochOf.get(id));
        for (const e of mine) expect(e.epoch).toBeLessThanOrEqual(result.epoch);
        // Per epoch: consecutive steps, once each, by one process.
        const epochs = [...new Set(mine.map((e) => e.epoch))].sort((x, y) => x - y);
        for (const epoch of epochs) {
          const run = mine.filter((e) => e.epoch === epoch);
          const first = run[0]!.step!;
          expect(run.map((e) => e.step)).toEqual(range(run.length, first));
          expect(new Set(run.map((e) => e.pid)).size).toBe(1);
        }
        // Every step done at least once.
        expect([...new Set(mine.map((e) => e.step))].sort((x, y) => x! - y!)).toEqual(range(STEPS));

        const orphan = orphanById.get(id);
        if (orphan === undefined) {
          // Never held by the dead node at its death: one run, epoch 1, each step exactly once.
          expect(result.epoch).toBe(1);
          expect(mine.map((e) => e.step)).toEqual(range(STEPS));
          expect(mine.every((e) => e.epoch === 1 && e.pid === result.pid)).toBe(true);
          return;
        }
        // Held by the dead node: re-run by a survivor from the checkpoint it had at the kill.
        const resumeAt = orphan.checkpoint?.next ?? 0;
        expect(result.epoch).toBeGreaterThan(orphan.epoch);
        expect(result.pid).not.toBe(victim.pid);
        expect(result.resumedFrom).toBe(resumeAt);
        const before = mine.filter((e) => e.epoch <= orphan.epoch);
        expect(before.every((e) => e.pid === victim.pid)).toBe(true);
        const last = mine.filter((e) => e.epoch === result.epoch).map((e) => e.step);
        expect(last).toEqual(range(STEPS - resumeAt, resumeAt));
        // At most the one step done but not yet checkpointed when the node died is done twice.
        const twice = mine.length - STEPS;
        expect(twice === 0 || twice === 1).toBe(true);
        if (twice === 1) expect(before.at(-1)?.step).toBe(resumeAt);
        repeated += twice;
      });
      expect(effects.length).toBe(ids.length * STEPS + repeated);
      console.info(
        `failover: ${ids.length} tasks, ${effects.length} effects, ${repeated} repeated steps (all on re-run orphans); ` +
          phases.join(', '),
      );
    }, 150_000);
  });

  describe('cross-node commands', () => {
    let cluster: Cluster;
    beforeAll(async () => {
      cluster = await startCluster('cross');
      clusters.push(cluster);
    }, 60_000);
    afterAll(() => killAll());

    const others = (holder: Node): [Node, Node] => {
      const rest = cluster.nodes.filter((n) => n !== holder);
      return [rest[0]!, rest[1]!];
    };

    it('tasks/get and tasks/cancel on another node: the cancel aborts the handler where it runs', async () => {
      const ids = await Promise.all(cluster.nodes.map((n) => submitTask(n, 'hold', { seconds: 120 })));
      await Promise.all(
        ids.map(async (id) => {
          const holder = await holderOf(cluster, id);
          const [other, third] = others(holder);
          const lease = await admin.query<{ lease_owner: string }>(
            `SELECT lease_owner FROM ${cluster.tasks} WHERE id = $1`,
            [id],
          );
          expect(lease.rows[0]?.lease_owner).toBe(holder.id);
          expect((await getTask(other, id)).status).toBe('working');
          expect((await getTask(third, id)).status).toBe('working');

          const ack = await rpc(other.url, 'tasks/cancel', { taskId: id });
          expect(ack.error).toBeUndefined();
          const aborted = await eventually(`${id} aborted`, () => effectsOf(cluster.cwd, id, 'aborted')[0]);
          expect(aborted).toMatchObject({ pid: holder.pid, epoch: 1 });
          const done = await eventually(`${id} cancelled on ${third.id}`, async () => {
            const task = await getTask(third, id);
            return isTerminalStatus(task) ? task : undefined;
          });
          expect(done.status).toBe('cancelled');
          expect((await getTask(holder, id)).status).toBe('cancelled');
        }),
      );
    }, 60_000);

    it('an input response given on one node wakes the handler waiting on another', async () => {
      const ids = await Promise.all(cluster.nodes.map((n, i) => submitTask(n, 'ask', { question: `question ${i}` })));
      await Promise.all(
        ids.map(async (id, i) => {
          const holder = await holderOf(cluster, id);
          const [other, third] = others(holder);
          const waiting = await eventually(`${id} input_required on ${other.id}`, async () => {
            const task = await getTask(other, id);
            return task.status === 'input_required' ? task : undefined;
          });
          const keys = Object.keys(waiting.inputRequests as Record<string, unknown>);
          expect(keys).toHaveLength(1);
          const ack = await rpc(other.url, 'tasks/update', {
            taskId: id,
            inputResponses: { [keys[0]!]: { action: 'accept', content: { answer: `answer ${i}` } } },
          });
          expect(ack.error).toBeUndefined();
          const done = await eventually(`${id} terminal on ${third.id}`, async () => {
            const task = await getTask(third, id);
            return isTerminalStatus(task) ? task : undefined;
          });
          expect(done.status).toBe('completed');
          // The handler that asked is the one that got the answer: same process, same epoch.
          expect(done.result.structuredContent).toMatchObject({ answer: `answer ${i}`, pid: holder.pid, epoch: 1 });
          expect(effectsOf(cluster.cwd, id, 'answered')).toMatchObject([{ pid: holder.pid, epoch: 1 }]);
        }),
      );
    }, 60_000);

    it('S5: the same submission key sent to two nodes at the same instant creates one task, 50 times', async () => {
      const RACES = 50;
      // Anonymous callers need 128-bit keys (issue 12 item 1): a random prefix, then the race number.
      const prefix = `race-${randomBytes(16).toString('base64url')}`;
      for (let race = 0; race < RACES; race += 1) {
        const key = `${prefix}-${race}`;
        const pair = [cluster.nodes[race % 3]!, cluster.nodes[(race + 1) % 3]!];
        const answers = await Promise.all(
          pair.map((n) => submit(n, 'count_effects', { steps: 1, stepMs: 0, label: key }, key)),
        );
        for (const answer of answers) expect(answer.result?.resultType, JSON.stringify(answer)).toBe('task');
        expect(answers[1]!.result.taskId).toBe(answers[0]!.result.taskId);
        const created = answers.map((x) => x.result._meta?.['mcp-terminus.dev/submission']?.created);
        expect(created.filter((c) => c === true)).toHaveLength(1);
        expect(created.filter((c) => c === false)).toHaveLength(1);
      }
      const { rows } = await admin.query<{ n: number; keys: number }>(
        `SELECT count(*)::int AS n, count(DISTINCT submission_key)::int AS keys FROM ${cluster.tasks}
         WHERE submission_key LIKE $1`,
        [`${prefix}-%`],
      );
      expect(rows[0]).toEqual({ n: RACES, keys: RACES });
    }, 60_000);

    it('terminus call --ledger postgres://...: the receipt is in the PostgreSQL ledger, and ops show finds it from another process', async () => {
      // The ledger CLI has no schema option: this uses the default schema `terminus` of the test database.
      const node = cluster.nodes[1]!;
      const args = JSON.stringify({ steps: 2, stepMs: 10, label: 'executor' });
      const call = runCli(
        ['call', 'count_effects', '--url', node.url, '--args', args, '--ledger', PG_URL, '--json'],
        cluster.cwd,
      );
      expect(await exitCode(call.child), Buffer.concat(call.stderr).toString()).toBe(0);
      const out = JSON.parse(Buffer.concat(call.stdout).toString());
      expect(out).toMatchObject({
        status: 'completed',
        operation: { state: 'ACCEPTED' },
        receipt: { status: 'completed' },
      });
      const taskId = out.receipt.taskId as string;
      expect((await getTask(cluster.nodes[2]!, taskId)).status).toBe('completed');

      const show = runCli(['ops', 'show', taskId, '--ledger', PG_URL, '--json'], cluster.cwd);
      expect(await exitCode(show.child), Buffer.concat(show.stderr).toString()).toBe(0);
      expect(JSON.parse(Buffer.concat(show.stdout).toString())).toMatchObject({
        operation: { taskId, state: 'ACCEPTED' },
        receipt: { id: out.receipt.id, taskId },
      });
    }, 60_000);

    it('SIGTERM: the node exits 0 and releases its leases; another node re-runs its task at the next epoch', async () => {
      const id = await submitTask(cluster.nodes[0]!, 'hold', { seconds: 120 });
      const holder = await holderOf(cluster, id);
      holder.child.kill('SIGTERM');
      expect(await exitCode(holder.child)).toBe(0);
      expect(effectsOf(cluster.cwd, id, 'aborted')).toMatchObject([{ pid: holder.pid, epoch: 1 }]);
      const rerun = await eventually(`${id} re-run`, () =>
        effectsOf(cluster.cwd, id, 'started').find((e) => e.epoch === 2),
      );
      expect(rerun.pid).not.toBe(holder.pid);
      const survivor = cluster.nodes.find((n) => n.pid === rerun.pid)!;
      expect((await getTask(survivor, id)).status).toBe('working');
      expect((await rpc(survivor.url, 'tasks/cancel', { taskId: id })).error).toBeUndefined();
    }, 60_000);
  });

  describe('a database that cannot be reached', () => {
    it('terminus serve and terminus ops --ledger exit 1 with one line on stderr, and create no folder (also for an unsupported URL)', async () => {
      const cwd = mkdtempSync(join(tmpdir(), 'terminus-unreachable-'));
      try {
        const serve = runCli(['serve', '--port', '0', '--db', 'postgres://nobody@127.0.0.1:1/none'], cwd);
        const ops = runCli(['ops', 'list', '--ledger', 'postgresql://nobody@127.0.0.1:1/none'], cwd);
        const mysql = runCli(['serve', '--port', '0', '--db', 'mysql://nobody@127.0.0.1/none'], cwd);
        expect(await exitCode(serve.child)).toBe(1);
        expect(await exitCode(ops.child)).toBe(1);
        expect(await exitCode(mysql.child)).toBe(1);
        expect(Buffer.concat(mysql.stderr).toString()).toMatch(
          /^terminus serve: unsupported database URL scheme mysql:[^\n]+\n$/,
        );
        const serveErr = Buffer.concat(serve.stderr).toString();
        const opsErr = Buffer.concat(ops.stderr).toString();
        expect(serveErr).toMatch(/^terminus serve: cannot reach PostgreSQL at 127\.0\.0\.1:1\/none: [^\n]+\n$/);
        expect(opsErr).toMatch(/^terminus ops: cannot reach PostgreSQL at 127\.0\.0\.1:1\/none: [^\n]+\n$/);
        expect(Buffer.concat(serve.stdout).toString()).toBe('');
        expect(existsSync(join(cwd, 'postgres:'))).toBe(false);
        expect(existsSync(join(cwd, '.terminus'))).toBe(false);
      } finally {
        rmSync(cwd, { recursive: true, force: true });
      }
    }, 30_000);
  });
}
