import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Two cores: more workers than that only adds contention to timing-sensitive process tests.
    maxWorkers: 2,
    reporters: ['default', './test/summary-reporter.ts'],
  },
});
