import { defineConfig } from 'vitest/config';
import { sourceAliases } from './vitest.aliases.js';

// The slow reliability suites (`npm run test:soak`, run by .ci/run after `npm test`): crash
// consistency under SIGKILL, sustained load, the exporter behind a fault-injecting proxy, supply
// chain. Each is bounded in time and stops by itself; figures go to .tmp/reliability/*.json.
export default defineConfig({
  resolve: {
    alias: sourceAliases,
  },
  test: {
    name: 'soak',
    include: ['packages/*/test/**/*.soak.test.ts'],
    testTimeout: 300_000,
    hookTimeout: 120_000,
    pool: 'forks',
    // One suite at a time: each measures the machine (latencies, memory, kill timing) on its own.
    fileParallelism: false,
  },
});
