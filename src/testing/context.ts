import { afterEach, beforeEach, it } from 'vitest';
import type { TaskStore } from '../store/port.js';

export interface DescribeTaskStoreOptions {
  /**
   * Cases this backend skips, by exact test name, with the reason (printed in the skipped test's
   * name). A skip without a reason is not allowed: say why, or pass the test.
   */
  readonly skip?: Readonly<Record<string, string>>;
  /** Called after each test's `close()`, e.g. to delete a temp file or truncate tables. */
  readonly cleanup?: () => Promise<void>;
}

/** What each case file gets: a fresh store per test, and `test` that honours the skip list. */
export interface SuiteContext {
  readonly store: () => TaskStore;
  readonly test: (name: string, body: () => Promise<void>) => void;
}

export function suiteContext(open: () => Promise<TaskStore>, options: DescribeTaskStoreOptions): SuiteContext {
  let current: TaskStore | null = null;
  beforeEach(async () => {
    current = await open();
  });
  afterEach(async () => {
    const store = current;
    current = null;
    await store?.close();
    await options.cleanup?.();
  });
  return {
    store: () => {
      if (current === null) throw new Error('store used outside a test');
      return current;
    },
    test: (name, body) => {
      const reason = options.skip?.[name];
      if (reason === undefined) it(name, body);
      else it.skip(`${name} (skipped: ${reason})`, body);
    },
  };
}
