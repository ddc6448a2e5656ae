import { afterAll, describe } from 'vitest';
import { describeTaskStore } from '../../src/testing.js';
import { adminPool, dropSchema, failWithoutDatabase, freshSchema, openStore, PG_URL } from './postgres-fixture.js';

if (PG_URL === '') {
  describe('TaskStore conformance: postgres', failWithoutDatabase);
} else {
  const admin = adminPool();
  afterAll(() => admin.end());
  // Each test on its own schema: migrated from scratch, dropped afterwards (ids of the suite's
  // fixtures repeat across runs, so a shared schema would collide).
  const schemas: string[] = [];
  describeTaskStore(
    'postgres',
    async () => {
      const schema = freshSchema('suite');
      schemas.push(schema);
      return openStore(schema);
    },
    {
      cleanup: async () => {
        for (const schema of schemas.splice(0)) await dropSchema(admin, schema);
      },
    },
  );
}
