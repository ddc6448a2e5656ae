import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { openSqliteTaskStore } from '../../src/store/sqlite/index.js';
import { describeTaskStore } from '../../src/testing.js';

const dir = mkdtempSync(join(tmpdir(), 'terminus-sqlite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
describeTaskStore('sqlite file', async () => {
  files += 1;
  return openSqliteTaskStore({ path: join(dir, `suite-${files}.db`) });
});

describeTaskStore('sqlite :memory:', async () => openSqliteTaskStore({ path: ':memory:' }));
