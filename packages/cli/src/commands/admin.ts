import { userInfo } from 'node:os';
import { Command } from 'commander';
import type { Services } from '@rxs/server';
import { UserError } from '../errors.js';
import { MAX_KEY_LIFETIME_DAYS } from '@rxs/server/config';
import { addStorageOptions, withServices, type StorageOptions } from './storage-options.js';

interface JsonOption {
  json?: boolean;
}

function print(value: unknown, options: JsonOption, text: () => string): void {
  process.stdout.write(options.json ? `${JSON.stringify(value, null, 2)}\n` : `${text()}\n`);
}

function table(rows: Record<string, unknown>[], columns: string[]): string {
  if (rows.length === 0) return '(none)';
  const cell = (v: unknown) => (v === null || v === undefined ? '-' : String(v));
  const widths = columns.map((c) => Math.max(c.length, ...rows.map((r) => cell(r[c]).length)));
  const line = (values: string[]) =>
    values
      .map((v, i) => v.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(columns), ...rows.map((r) => line(columns.map((c) => cell(r[c]))))].join('\n');
}

/** Who acts, for the audit log: the command line has no signed-in user, so the system account. */
function cliActor() {
  let who: string;
  try {
    who = userInfo().username;
  } catch {
    who = 'unknown';
  }
  return { userId: null, label: `rxs admin (${who})`, address: null };
}

/** A tenant by id or by exact name. */
async function resolveTenant(services: Services, ref: string): Promise<string> {
  const tenants = await services.accounts.listTenants();
  const found = tenants.filter((t) => t.id === ref || t.name === ref);
  if (found.length === 1) return found[0]!.id;
  if (found.length > 1)
    throw new UserError(`Several tenants are named "${ref}"; pass the tenant id instead.`);
  throw new UserError(`No tenant "${ref}". List them with: rxs admin tenants`);
}

/** A user of a tenant by id or e-mail. */
async function resolveUser(services: Services, tenantId: string, ref: string): Promise<string> {
  const user = (await services.accounts.listUsers(tenantId)).find(
    (u) => u.id === ref || u.email === ref.toLowerCase(),
  );
  if (!user)
    throw new UserError(`No user "${ref}" in this tenant. List them with: rxs admin users --tenant <tenant>`);
  return user.id;
}

/** "90d", "12h", "30m" or an ISO date-time. */
export function parseExpiry(value: string, now = Date.now()): string {
  const relative = /^(\d+)([dhm])$/.exec(value);
  if (relative) {
    const unit = { d: 86_400_000, h: 3_600_000, m: 60_000 }[relative[2] as 'd' | 'h' | 'm'];
    const lifetime = Number(relative[1]) * unit;
    // Checked again (with the installation's own maximum) when the key is made; this keeps the date valid.
    if (lifetime > MAX_KEY_LIFETIME_DAYS * 86_400_000)
      throw new UserError(
        `--expires ${value} is too far ahead: keys live at most ${MAX_KEY_LIFETIME_DAYS} days.`,
      );
    return new Date(now + lifetime).toISOString();
  }
  const parsed = Date.parse(value);
  if (Number.isNaN(parsed))
    throw new UserError(`--expires takes a duration like 90d, 12h, 30m or an ISO date, not "${value}".`);
  if (parsed <= now) throw new UserError(`--expires ${value} is in the past.`);
  if (parsed > now + MAX_KEY_LIFETIME_DAYS * 86_400_000)
    throw new UserError(
      `--expires ${value} is too far ahead: keys live at most ${MAX_KEY_LIFETIME_DAYS} days.`,
    );
  return new Date(parsed).toISOString();
}

export async function readPassword(options: {
  password?: string;
  passwordStdin?: boolean;
}): Promise<string | undefined> {
  if (options.passwordStdin) {
    const chunks: Buffer[] = [];
    for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks)
      .toString('utf8')
      .replace(/\r?\n$/, '');
  }
  return options.password;
}

type Opts = StorageOptions & JsonOption & { password?: string; passwordStdin?: boolean };

function leaf(name: string, description: string): Command {
  return addStorageOptions(new Command(name).description(description).option('--json', 'print JSON'));
}

export function adminCommand(): Command {
  const admin = new Command('admin')
    .description('Bootstrap and administer tenants, users and API keys, without the web app')
    .addHelpText(
      'after',
      `
Examples:
  rxs admin bootstrap --tenant "Acme Medical" --email owner@acme.example --password-stdin
  rxs admin user create --tenant "Acme Medical" --email qa@acme.example --role editor
  rxs admin key create --tenant "Acme Medical" --user qa@acme.example --name ci --expires 90d
  rxs admin keys --tenant "Acme Medical"
  rxs admin key revoke --tenant "Acme Medical" 1a2b3c4d5e6f7a8b
  rxs admin audit --tenant "Acme Medical" --json`,
    );

  admin.addCommand(
    leaf('bootstrap', 'Create a tenant with its first owner and an API key for them')
      .requiredOption('--tenant <name>', 'name of the new tenant')
      .requiredOption('--email <email>', "the owner's e-mail (their web sign-in)")
      .option('--password <password>', 'web sign-in password (prefer --password-stdin)')
      .option('--password-stdin', 'read the password from standard input')
      .option('--expires <when>', 'key expiry: 90d, 12h, or an ISO date (default: never)')
      .action(async (o: Opts & { tenant: string; email: string; expires?: string }) => {
        const password = await readPassword(o);
        const result = await withServices(o, async ({ accounts }) => {
          const tenant = await accounts.createTenant(o.tenant);
          const user = await accounts.createUser(
            tenant.id,
            { email: o.email, role: 'owner', password },
            cliActor(),
          );
          const key = await accounts.createApiKey(
            tenant.id,
            { userId: user.id, name: 'bootstrap', expiresAt: o.expires ? parseExpiry(o.expires) : null },
            cliActor(),
          );
          return { tenant, user, key };
        });
        print(result, o, () =>
          [
            `Tenant ${result.tenant.name}: ${result.tenant.id}`,
            `Owner ${result.user.email}: ${result.user.id}`,
            `API key (shown once, store it now): ${result.key.key}`,
          ].join('\n'),
        );
      }),
  );

  admin.addCommand(
    leaf('tenants', 'List tenants').action(async (o: Opts) => {
      const tenants = await withServices(o, (s) => s.accounts.listTenants());
      print(tenants, o, () => table(tenants as never, ['id', 'name', 'created_at']));
    }),
  );

  const tenant = new Command('tenant').description('Manage tenants');
  tenant.addCommand(
    leaf('create', 'Create a tenant')
      .argument('<name>', 'tenant name')
      .action(async (name: string, o: Opts) => {
        const created = await withServices(o, (s) => s.accounts.createTenant(name));
        print(created, o, () => `Tenant ${created.name}: ${created.id}`);
      }),
  );
  admin.addCommand(tenant);

  admin.addCommand(
    leaf('users', 'List the users of a tenant')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .action(async (o: Opts & { tenant: string }) => {
        const users = await withServices(o, async (s) =>
          s.accounts.listUsers(await resolveTenant(s, o.tenant)),
        );
        print(users, o, () => table(users as never, ['id', 'email', 'role', 'created_at']));
      }),
  );

  const user = new Command('user').description('Manage users');
  user.addCommand(
    leaf('create', 'Create a user with a role (owner, admin, editor, viewer)')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .requiredOption('--email <email>', 'e-mail (web sign-in)')
      .requiredOption('--role <role>', 'owner, admin, editor or viewer')
      .option('--name <name>', 'display name')
      .option('--password <password>', 'web sign-in password (prefer --password-stdin)')
      .option('--password-stdin', 'read the password from standard input')
      .action(async (o: Opts & { tenant: string; email: string; role: string; name?: string }) => {
        const password = await readPassword(o);
        const created = await withServices(o, async (s) =>
          s.accounts.createUser(
            await resolveTenant(s, o.tenant),
            { email: o.email, role: o.role, name: o.name, password },
            cliActor(),
          ),
        );
        print(created, o, () => `User ${created.email} (${created.role}): ${created.id}`);
      }),
  );
  user.addCommand(
    leaf('role', "Change a user's role")
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .argument('<user>', 'user id or e-mail')
      .argument('<role>', 'owner, admin, editor or viewer')
      .action(async (ref: string, role: string, o: Opts & { tenant: string }) => {
        const updated = await withServices(o, async (s) => {
          const tenantId = await resolveTenant(s, o.tenant);
          return s.accounts.setRole(tenantId, await resolveUser(s, tenantId, ref), role, cliActor());
        });
        print(updated, o, () => `User ${updated.email} is now ${updated.role}.`);
      }),
  );
  user.addCommand(
    leaf('delete', 'Delete a user; their keys stop working at once')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .argument('<user>', 'user id or e-mail')
      .action(async (ref: string, o: Opts & { tenant: string }) => {
        await withServices(o, async (s) => {
          const tenantId = await resolveTenant(s, o.tenant);
          await s.accounts.deleteUser(tenantId, await resolveUser(s, tenantId, ref), cliActor());
        });
        print({ deleted: ref }, o, () => `User ${ref} deleted; their API keys are revoked.`);
      }),
  );
  admin.addCommand(user);

  admin.addCommand(
    leaf('keys', 'List the API keys of a tenant (never the keys themselves)')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .option('--user <user>', 'only this user (id or e-mail)')
      .option('--all', 'include revoked keys')
      .action(async (o: Opts & { tenant: string; user?: string; all?: boolean }) => {
        const keys = await withServices(o, async (s) => {
          const tenantId = await resolveTenant(s, o.tenant);
          const userId = o.user ? await resolveUser(s, tenantId, o.user) : undefined;
          return s.accounts.listApiKeys(tenantId, { userId, includeRevoked: o.all });
        });
        print(keys, o, () =>
          table(keys as never, [
            'id',
            'name',
            'user_email',
            'created_at',
            'expires_at',
            'revoked_at',
            'last_used_at',
          ]),
        );
      }),
  );

  const key = new Command('key').description('Manage API keys');
  key.addCommand(
    leaf('create', 'Create an API key for a user (shown once)')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .requiredOption('--user <user>', 'user id or e-mail')
      .option('--name <name>', 'what the key is for', 'API key')
      .option('--expires <when>', 'expiry: 90d, 12h, 30m, or an ISO date (default: never)')
      .action(async (o: Opts & { tenant: string; user: string; name: string; expires?: string }) => {
        const created = await withServices(o, async (s) => {
          const tenantId = await resolveTenant(s, o.tenant);
          return s.accounts.createApiKey(
            tenantId,
            {
              userId: await resolveUser(s, tenantId, o.user),
              name: o.name,
              expiresAt: o.expires ? parseExpiry(o.expires) : null,
            },
            cliActor(),
          );
        });
        print(created, o, () =>
          [
            `API key ${created.id} for ${created.user_email}${created.expires_at ? `, expires ${created.expires_at}` : ''}`,
            `Key (shown once, store it now): ${created.key}`,
          ].join('\n'),
        );
      }),
  );
  key.addCommand(
    leaf('revoke', 'Revoke an API key; it stops working at once')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .argument('<key-id>', 'the key id shown by "rxs admin keys"')
      .action(async (id: string, o: Opts & { tenant: string }) => {
        const revoked = await withServices(o, async (s) =>
          s.accounts.revokeApiKey(await resolveTenant(s, o.tenant), id, cliActor()),
        );
        print(revoked, o, () => `API key ${revoked.id} revoked at ${revoked.revoked_at}.`);
      }),
  );
  key.addCommand(
    leaf('regenerate', 'Revoke an API key and issue a new one for the same user and name')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .argument('<key-id>', 'the key id shown by "rxs admin keys"')
      .action(async (id: string, o: Opts & { tenant: string }) => {
        const fresh = await withServices(o, async (s) =>
          s.accounts.regenerateApiKey(await resolveTenant(s, o.tenant), id, cliActor()),
        );
        print(
          fresh,
          o,
          () => `API key ${id} revoked. New key ${fresh.id} (shown once, store it now): ${fresh.key}`,
        );
      }),
  );
  admin.addCommand(key);

  admin.addCommand(
    leaf('audit', 'Show the security audit log of a tenant, newest first (sign-ins, keys, users, roles)')
      .requiredOption('--tenant <tenant>', 'tenant id or name')
      .option('--limit <n>', 'events to show, 1..500', '100')
      .action(async (o: Opts & { tenant: string; limit: string }) => {
        const limit = Number(o.limit);
        if (!Number.isInteger(limit) || limit < 1 || limit > 500) {
          throw new UserError(`--limit takes a whole number from 1 to 500, not "${o.limit}".`);
        }
        const events = await withServices(o, async (s) =>
          s.accounts.audit.list(await resolveTenant(s, o.tenant), { limit }),
        );
        print(events, o, () =>
          table(events as never, ['at', 'action', 'actor', 'client_address', 'target', 'detail']),
        );
      }),
  );
  return admin;
}
