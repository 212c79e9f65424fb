import { defineConfig } from 'vitest/config';
import { sourceAliases } from './vitest.aliases.js';

// The server's API suite runs twice, on SQLite and on PostgreSQL (RXS_TEST_POSTGRES_URL, started
// by .ci/run or scripts/pg-test-cluster.sh). Without that URL the PostgreSQL run is left out, loudly.
const postgresUrl = process.env.RXS_TEST_POSTGRES_URL;
if (!postgresUrl) {
  console.warn(
    'RXS_TEST_POSTGRES_URL is not set: the PostgreSQL run of the server suite is skipped. See scripts/pg-test-cluster.sh.',
  );
}

// Browser tests and the SQLite crash test need one database only.
const sqliteOnly = ['packages/server/test/durability.test.ts', 'packages/server/test/web-*.test.ts'];
// The slow reliability suites run apart, with `npm run test:soak` (vitest.soak.config.ts).
const soak = '**/*.soak.test.ts';

export default defineConfig({
  resolve: {
    // Tests run against the TypeScript sources; the packages' `exports` point at their builds.
    alias: sourceAliases,
  },
  test: {
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: 'forks',
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: [
            'packages/*/src/**/*.test.ts',
            'packages/exchange/test/**/*.test.ts',
            'packages/cli/test/**/*.test.ts',
            'packages/web/test/**/*.test.ts',
          ],
        },
      },
      {
        extends: true,
        test: {
          name: 'server-sqlite',
          include: ['packages/server/test/**/*.test.ts'],
          exclude: ['**/*.postgres.test.ts', soak],
        },
      },
      ...(postgresUrl
        ? [
            {
              extends: true,
              test: {
                name: 'server-postgres',
                include: ['packages/server/test/**/*.test.ts'],
                exclude: [...sqliteOnly, soak],
                env: { RXS_TEST_DATABASE: 'postgres' },
              },
            },
          ]
        : []),
    ],
  },
});
