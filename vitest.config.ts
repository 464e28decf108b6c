import { defineConfig } from 'vitest/config'

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    // Collects the fault suite's figures and prints them as one table at the end.
    globalSetup: ['test/faults/global-setup.ts'],
    pool: 'forks',
    // Two cores: more parallel files only queue behind each other and the databases.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
})
