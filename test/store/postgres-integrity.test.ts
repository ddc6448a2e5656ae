import { afterAll, describe, expect, test } from 'vitest';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

/** Issue 12 item 10 on PostgreSQL: a schema whose tables the recorded migrations should have made is refused. */
const admin = PG_URL === '' ? undefined : adminPool();
const schemas: string[] = [];
afterAll(async () => {
  for (const schema of schemas) await dropSchema(admin!, schema);
  await admin?.end();
});

describe('PostgreSQL store: schema check at open', () => {
  if (admin === undefined) return failWithoutDatabase();
  test('a dropped tasks table, or a dropped column, is refused with the schema and the cause', async () => {
    const schema = freshSchema('damaged');
    schemas.push(schema);
    await (await openStore(schema)).close();
    await admin.query(`ALTER TABLE "${schema}".submission_keys DROP COLUMN created_at`);
    await expect(openStore(schema)).rejects.toMatchObject({
      code: 'storage_damaged',
      message: `PostgreSQL schema ${schema}: table submission_keys lacks column(s) created_at`,
    });
    await admin.query(`DROP TABLE "${schema}".tasks CASCADE`);
    await expect(openStore(schema)).rejects.toMatchObject({
      code: 'storage_damaged',
      message: `PostgreSQL schema ${schema}: table tasks is missing although schema_migrations records the migration that creates it`,
    });
  });
});
