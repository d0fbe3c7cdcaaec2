import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

// Vitest runs cores − 1 files at once, so one on a 2-core machine (CI's): the suite then took
// 650-680 s there, most of it waiting on PostgreSQL and child processes. Two files at once on
// those two cores: 443 s (bench/RESULTS.md (p), "The suite").
const WORKERS = Math.max(2, availableParallelism() - 1);

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/helpers/global-setup.ts'],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    maxWorkers: WORKERS,
    reporters: process.env['CI'] ? ['default'] : ['default'],
  },
});
