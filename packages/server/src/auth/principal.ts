import type { Permission, Role } from '@rxs/contract';
import { roleAllows } from '@rxs/contract';
import { forbidden } from '../http/errors.js';

/** Who is calling: resolved from the API key (or, in the web app, the session) before any route runs. */
export interface Principal {
  tenantId: string;
  userId: string;
  role: Role;
  /** The API key used, when the call came with one. */
  keyId?: string;
  /** How the call came: absent means `api-key` when keyId is set, else `session` (the web app). */
  via?: 'api-key' | 'session' | 'local';
}

declare module 'fastify' {
  interface FastifyRequest {
    principal?: Principal;
  }
}

export function requirePermission(principal: Principal, permission: Permission): void {
  if (!roleAllows(principal.role, permission)) {
    throw forbidden(
      `Your role "${principal.role}" lacks the permission "${permission}" for this operation. Ask an owner or admin of your tenant to change your role.`,
    );
  }
}
