/** `terminus ops` on a ledger without a server: rollback epochs, lookups that miss, a missing ledger. */
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { openSqliteLedger } from '../../src/executor/ledger/sqlite.js';
import { killAll, onlyJson, tempDir, terminus } from './helpers.js';

const SLOW = 180_000;
const dir = tempDir('terminus-ops-');
afterAll(() => {
  killAll();
  dir.remove();
});

describe('terminus ops', () => {
  it(
    'rollback bumps the executor epoch each time and the ledger keeps it',
    async () => {
      const file = join(dir.path, 'rollback.db');
      await openSqliteLedger({ path: file }).close();
      const first = await terminus(['ops', 'rollback', '--json', '--ledger', file], { cwd: dir.path });
      expect(first.code).toBe(0);
      expect(onlyJson(first.stdout)).toEqual({ epoch: 1, inFlight: 0 });
      const second = await terminus(['ops', 'rollback', '--ledger', file], { cwd: dir.path });
      expect(second.stdout).toMatch(/executor epoch is now 2/);
      const ledger = openSqliteLedger({ path: file });
      expect(await ledger.currentEpoch()).toBe(2);
      await ledger.close();
    },
    SLOW,
  );

  it(
    'show of an unknown id exits 1; a missing ledger is a usage error (2); empty lists say so',
    async () => {
      const file = join(dir.path, 'empty.db');
      await openSqliteLedger({ path: file }).close();
      const missing = await terminus(['ops', 'show', 'op_nope', '--ledger', file], { cwd: dir.path });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toMatch(/no operation, call node, task or submission key op_nope/);
      const noLedger = await terminus(['ops', 'list', '--ledger', join(dir.path, 'absent.db')], { cwd: dir.path });
      expect(noLedger.code).toBe(2);
      const empty = await terminus(['ops', 'reconcile', '--ledger', file], { cwd: dir.path });
      expect(empty.stdout).toBe('nothing to reconcile\n');
    },
    SLOW,
  );

  it(
    'an ID that begins with - (a peer may issue one) is a usage error that says how to pass it, and after -- it is looked up',
    async () => {
      const file = join(dir.path, 'dash.db');
      await openSqliteLedger({ path: file }).close();
      const id = '--a_6AghWsJPJiX7p7xACQ';
      const bare = await terminus(['ops', 'show', id, '--ledger', file], { cwd: dir.path });
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain(`put it after --: terminus ops show -- ${id}`);
      const separated = await terminus(['ops', 'show', '--ledger', file, '--', id], { cwd: dir.path });
      expect(separated.code).toBe(1);
      expect(separated.stderr).toContain(`no operation, call node, task or submission key ${id}`);
      const list = await terminus(['ops', 'list', '--jsn', '--ledger', file], { cwd: dir.path });
      expect(list.code).toBe(2);
      expect(list.stderr).not.toContain('is an ID');
    },
    SLOW,
  );
});
