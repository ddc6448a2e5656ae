import { execFileSync } from 'node:child_process';

/**
 * `npm test` needs a PostgreSQL for the test/**\/postgres* files. CI (`.ci/run`) starts one and sets
 * TERMINUS_TEST_PG_URL; a developer running `npm test` bare gets a throwaway one from the same
 * script (installed from Debian packages when missing, which needs root), stopped after the run.
 * If that fails, the PostgreSQL tests fail with the reason: a missing database is never a skip.
 */
export default function setup(): (() => void) | undefined {
  // Once, before any worker starts: many tests run the built CLI (dist/), and a rebuild inside a
  // test while another reads dist/ fails it with a half-written module.
  execFileSync(process.execPath, ['scripts/build-if-stale.mjs'], { stdio: ['ignore', 'inherit', 'inherit'] });
  if (process.env.TERMINUS_TEST_PG_URL) return undefined;
  let out: string;
  try {
    out = execFileSync('bash', ['.ci/postgres.sh', 'start'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch (error) {
    process.stderr.write(`could not start a throwaway PostgreSQL: ${String(error)}\n`);
    return undefined;
  }
  for (const line of out.split('\n')) {
    const match = /^export (TERMINUS_TEST_PG_URL|TERMINUS_PG_DIR)=(.*)$/.exec(line);
    if (match?.[1] !== undefined && match[2] !== undefined) process.env[match[1]] = unquote(match[2]);
  }
  const dir = process.env.TERMINUS_PG_DIR;
  return () => {
    execFileSync('bash', ['.ci/postgres.sh', 'stop'], {
      stdio: 'inherit',
      env: { ...process.env, TERMINUS_PG_DIR: dir },
    });
  };
}

/** Undoes bash `printf %q` quoting for the characters a URL or a temp path can hold. */
function unquote(value: string): string {
  if (value.startsWith("'") && value.endsWith("'")) return value.slice(1, -1);
  return value.replace(/\\(.)/g, '$1');
}
