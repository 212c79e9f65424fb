export const PERMISSIONS = [
  'kt:read',
  'kt:write',
  'kt:approve',
  'records:read',
  'records:write',
  'traces:read',
  'traces:write',
  'keys:manage',
  'users:manage',
] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const ROLES = ['owner', 'admin', 'editor', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

/**
 * What each role may do. `keys:manage` covers everyone's keys in the tenant; editors also manage their
 * own keys, while viewers may only see and revoke theirs (an owner or admin issues keys for them).
 */
export const ROLE_PERMISSIONS: Readonly<Record<Role, readonly Permission[]>> = {
  owner: PERMISSIONS,
  admin: PERMISSIONS,
  editor: ['kt:read', 'kt:write', 'records:read', 'records:write', 'traces:read', 'traces:write'],
  viewer: ['kt:read', 'records:read', 'traces:read'],
};

export function roleAllows(role: Role, permission: Permission): boolean {
  return ROLE_PERMISSIONS[role].includes(permission);
}

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}
