/**
 * The variants of a run and what they need: a scratch directory (databases and the fsync probe on
 * one file system), a PostgreSQL when one is configured or can be started, and the server spec of
 * each variant.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { ROOT, type ServerSpec } from './proc.js';

const run = promisify(execFile);

export type VariantId = 'B0' | 'sqlite' | 'postgres' | 'floor' | 'floor-pg';

/** The floors: bench/servers/floor.ts on SQLite, and on the PostgreSQL ours runs on. */
export function isFloor(id: VariantId): boolean {
  return id === 'floor' || id === 'floor-pg';
}

export interface Variant {
  readonly id: VariantId;
  readonly label: string;
  /** The task tool, and the plain synchronous tool of the same server (B1 in the B0 process). */
  readonly taskTool: string;
  readonly syncTool: string;
  /** Set when the variant cannot run here. */
  readonly notRun?: string;
}

export const VARIANT_LABELS: Record<VariantId, string> = {
  B0: 'B0 SDK 1.32 InMemoryTaskStore',
  sqlite: 'ours SQLite (synchronous=FULL)',
  postgres: 'ours PostgreSQL',
  floor: 'floor: node:http + better-sqlite3',
  'floor-pg': 'floor: node:http + pg',
};

/**
 * The floors (bench/servers/floor.ts) answer only the request figures (1, 2, 5, 8): they have no
 * notifications, cancel, executor or recovery to measure. The other figures skip them.
 */
export const FLOOR_FIGURES: readonly number[] = [1, 2, 5, 8];

export interface ServerOptions {
  readonly pollMs: number;
  readonly commitLog?: string;
  /** B0: open tasks to seed in-process. */
  readonly seed?: number;
  /** Ours: the database (file, or schema on the PostgreSQL). */
  readonly db?: Database;
}

export type Database =
  | { readonly kind: 'sqlite'; readonly path: string }
  | { readonly kind: 'postgres'; readonly url: string; readonly schema: string };

export interface BenchEnv {
  readonly dir: string;
  readonly variants: readonly Variant[];
  readonly pgUrl: string | undefined;
  /** A new, empty database for a variant of ours. */
  freshDb(variant: VariantId, label: string): Database;
  spec(variant: VariantId, options: ServerOptions): ServerSpec;
  close(): Promise<void>;
}

let counter = 0;

export async function openBenchEnv(options: { noPostgres: boolean; log: (line: string) => void }): Promise<BenchEnv> {
  const dir = mkdtempSync(join(tmpdir(), 'terminus-bench-'));
  const pgSetup = options.noPostgres ? { reason: 'disabled with --no-postgres' } : await postgres(options.log);
  const schemas: string[] = [];
  const variants: Variant[] = [
    { id: 'B0', label: VARIANT_LABELS.B0, taskTool: 'bench_sleep', syncTool: 'bench_sleep_sync' },
    { id: 'sqlite', label: VARIANT_LABELS.sqlite, taskTool: 'bench_sleep', syncTool: 'bench_sleep' },
    {
      id: 'postgres',
      label: VARIANT_LABELS.postgres,
      taskTool: 'bench_sleep',
      syncTool: 'bench_sleep',
      ...('reason' in pgSetup ? { notRun: pgSetup.reason } : {}),
    },
    { id: 'floor', label: VARIANT_LABELS.floor, taskTool: 'bench_sleep', syncTool: 'bench_sleep' },
    {
      id: 'floor-pg',
      label: VARIANT_LABELS['floor-pg'],
      taskTool: 'bench_sleep',
      syncTool: 'bench_sleep',
      ...('reason' in pgSetup ? { notRun: pgSetup.reason } : {}),
    },
  ];
  const pgUrl = 'url' in pgSetup ? pgSetup.url : undefined;

  return {
    dir,
    variants,
    pgUrl,
    freshDb(variant, label) {
      counter += 1;
      if (variant === 'postgres' || variant === 'floor-pg') {
        if (pgUrl === undefined) throw new Error('no PostgreSQL');
        const schema = `bench_${process.pid}_${counter}`;
        schemas.push(schema);
        return { kind: 'postgres', url: pgUrl, schema };
      }
      return { kind: 'sqlite', path: join(dir, `${label}-${counter}.db`) };
    },
    spec(variant, server) {
      const common = [
        '--poll-ms',
        String(server.pollMs),
        ...(server.commitLog === undefined ? [] : ['--commit-log', server.commitLog]),
      ];
      if (variant === 'B0') {
        return { entry: 'bench/baselines/sdk132-server.ts', args: [...common, '--seed', String(server.seed ?? 0)] };
      }
      const db = server.db;
      if (db === undefined) throw new Error(`variant ${variant} needs a database`);
      if (isFloor(variant)) {
        const dbArgs = db.kind === 'sqlite' ? ['--db', db.path] : ['--pg', db.url, '--schema', db.schema];
        return { entry: 'bench/servers/floor.ts', args: [...common, ...dbArgs, '--seed', String(server.seed ?? 0)] };
      }
      const dbArgs = db.kind === 'sqlite' ? ['--db', db.path] : ['--db', db.url, '--schema', db.schema];
      return { entry: 'bench/servers/terminus.ts', args: [...common, ...dbArgs] };
    },
    async close() {
      if (pgUrl !== undefined && schemas.length > 0) {
        const client = new pg.Client({ connectionString: pgUrl });
        await client.connect();
        for (const schema of schemas) await client.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
        await client.end();
      }
      if ('url' in pgSetup && pgSetup.stop !== undefined) await pgSetup.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type PgSetup = { readonly url: string; readonly stop?: () => Promise<void> } | { readonly reason: string };

/** `TERMINUS_TEST_PG_URL` when set (left running), else a throwaway one from `.ci/postgres.sh` (stopped at the end). */
async function postgres(log: (line: string) => void): Promise<PgSetup> {
  const given = process.env.TERMINUS_TEST_PG_URL;
  if (given !== undefined && given !== '') return { url: given };
  log('starting a throwaway PostgreSQL (.ci/postgres.sh start)');
  try {
    const { stdout } = await run('bash', [join(ROOT, '.ci/postgres.sh'), 'start'], { cwd: ROOT, timeout: 180_000 });
    const url = /TERMINUS_TEST_PG_URL=(\S+)/.exec(stdout)?.[1];
    const pgDir = /TERMINUS_PG_DIR=(\S+)/.exec(stdout)?.[1];
    if (url === undefined || pgDir === undefined) return { reason: '.ci/postgres.sh printed no URL' };
    const unquote = (value: string): string => value.replace(/^'(.*)'$/, '$1');
    return {
      url: unquote(url),
      stop: async () => {
        await run('bash', [join(ROOT, '.ci/postgres.sh'), 'stop'], {
          cwd: ROOT,
          env: { ...process.env, TERMINUS_PG_DIR: unquote(pgDir) },
          timeout: 60_000,
        });
      },
    };
  } catch (error) {
    const text = error instanceof Error ? error.message.split('\n')[0] : String(error);
    return { reason: `no TERMINUS_TEST_PG_URL and .ci/postgres.sh could not start one (${text})` };
  }
}
