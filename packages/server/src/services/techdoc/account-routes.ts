import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyPluginAsync } from 'fastify';
import { Account } from '@rxs/contract';
import type { Accounts } from '../../auth/accounts.js';
import { apiKeySecurity, errorResponses } from '../../http/schemas.js';

/**
 * `GET /account` (served with techdoc, RXS): who the calling key acts for. Every valid key may ask:
 * it tells nothing beyond its own user, role and tenant.
 */
export function accountRoutes(accounts: Accounts): FastifyPluginAsync {
  return async (fastify) => {
    const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
    app.get(
      '/account',
      {
        schema: {
          tags: ['account'],
          security: apiKeySecurity,
          summary:
            "RXS: the calling API key's user, role, permissions and tenant (by name), and the key's expiry",
          response: { 200: Account, ...errorResponses },
        },
      },
      async (request) => accounts.accountOf(request.principal!),
    );
  };
}
