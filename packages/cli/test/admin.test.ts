import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_BODY_LIMIT, SERVICES, startServer, type RunningServer } from '@rxs/server';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from './run-cli.js';

describe('rxs admin: bootstrapping without the web app', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-admin-'));
  const admin = (...args: string[]) => runCli(['admin', ...args, '--data-dir', dataDir]);
  let server: RunningServer;
  const get = (path: string, key: string) => fetch(`${server.url}${path}`, { headers: { 'x-api-key': key } });

  beforeAll(async () => {
    server = await startServer(
      {
        host: '127.0.0.1',
        port: 0,
        dataDir,
        services: [...SERVICES],
        bodyLimit: DEFAULT_BODY_LIMIT,
        logLevel: 'silent',
      },
      { logger: false },
    );
  });
  afterAll(async () => {
    await server.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('bootstrap creates a tenant, its owner (password from stdin) and a working key shown once', async () => {
    const result = await runCli(
      [
        'admin',
        'bootstrap',
        '--tenant',
        'Acme Medical',
        '--email',
        'Owner@Acme.example',
        '--password-stdin',
        '--json',
        '--data-dir',
        dataDir,
      ],
      {
        input: 'correct horse battery staple\n',
      },
    );
    expect(result.code, result.stderr).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.user).toMatchObject({ email: 'owner@acme.example', role: 'owner' });
    expect(out.key.key).toMatch(/^rxs_[0-9a-f]{16}_/);
    expect((await get('/kt/', out.key.key)).status).toBe(200);
    const user = await server.app.services.accounts.findUserByEmail('owner@acme.example');
    expect(user?.password_hash).toMatch(/^scrypt\$/);
  });

  it('users and keys: create with a role and an expiry, list without secrets, revoke, regenerate', async () => {
    expect(
      (
        await admin(
          'user',
          'create',
          '--tenant',
          'Acme Medical',
          '--email',
          'qa@acme.example',
          '--role',
          'viewer',
        )
      ).code,
    ).toBe(0);
    const bad = await admin(
      'user',
      'create',
      '--tenant',
      'Acme Medical',
      '--email',
      'x@acme.example',
      '--role',
      'god',
    );
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/owner, admin, editor, viewer/);

    const created = JSON.parse(
      (
        await admin(
          'key',
          'create',
          '--tenant',
          'Acme Medical',
          '--user',
          'qa@acme.example',
          '--name',
          'ci',
          '--expires',
          '30d',
          '--json',
        )
      ).stdout,
    );
    expect(Date.parse(created.expires_at) - Date.now()).toBeGreaterThan(29 * 86_400_000);
    const viewerKey: string = created.key;
    expect((await get('/kt/', viewerKey)).status).toBe(200);

    const listed = await admin('keys', '--tenant', 'Acme Medical');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(created.id);
    expect(listed.stdout).not.toContain(viewerKey.slice(-20));

    const regenerated = JSON.parse(
      (await admin('key', 'regenerate', '--tenant', 'Acme Medical', created.id, '--json')).stdout,
    );
    expect((await get('/kt/', viewerKey)).status).toBe(401);
    expect((await get('/kt/', regenerated.key)).status).toBe(200);

    expect((await admin('key', 'revoke', '--tenant', 'Acme Medical', regenerated.id)).code).toBe(0);
    const revoked = await get('/kt/', regenerated.key);
    expect(revoked.status).toBe(401);
    expect(((await revoked.json()) as { detail: string }).detail).toMatch(/revoked/);
  }, 120_000);

  it('audit: shows who changed users and keys, newest first, for one tenant only', async () => {
    expect((await admin('tenant', 'create', 'Other Labs')).code).toBe(0);
    expect(
      (
        await admin(
          'user',
          'create',
          '--tenant',
          'Other Labs',
          '--email',
          'qa@acme.example',
          '--role',
          'editor',
        )
      ).code,
    ).toBe(0);
    const result = await admin('audit', '--tenant', 'Acme Medical', '--json');
    expect(result.code, result.stderr).toBe(0);
    const events = JSON.parse(result.stdout) as { action: string; actor: string; target: string | null }[];
    const actions = events.map((e) => e.action);
    for (const action of ['user-created', 'key-created', 'key-regenerated', 'key-revoked']) {
      expect(actions).toContain(action);
    }
    expect(events.every((e) => e.actor.startsWith('rxs admin ('))).toBe(true);
    // The other tenant's user with the same address is in its own log only.
    expect(events.filter((e) => e.action === 'user-created' && e.target === 'qa@acme.example')).toHaveLength(
      1,
    );
    const other = JSON.parse((await admin('audit', '--tenant', 'Other Labs', '--json')).stdout) as {
      action: string;
    }[];
    expect(other.map((e) => e.action)).toEqual(['user-created']);
    const text = await admin('audit', '--tenant', 'Acme Medical', '--limit', '2');
    expect(text.stdout.split('\n')[0]).toMatch(/^at\s+action\s+actor/);
    const bad = await admin('audit', '--tenant', 'Acme Medical', '--limit', '0');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/--limit takes a whole number from 1 to 500/);
    // Six runs of rxs: each starts a process and opens the database.
  }, 120_000);

  it('clear errors for unknown tenants and past expiry dates', async () => {
    const unknown = await admin('users', '--tenant', 'Nope Inc');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/No tenant "Nope Inc"/);
    const past = await admin(
      'key',
      'create',
      '--tenant',
      'Acme Medical',
      '--user',
      'qa@acme.example',
      '--expires',
      '2001-01-01',
    );
    expect(past.code).toBe(1);
    expect(past.stderr).toMatch(/in the past/);
    for (const expires of ['99999d', '99999-01-01']) {
      const far = await admin(
        'key',
        'create',
        '--tenant',
        'Acme Medical',
        '--user',
        'qa@acme.example',
        '--expires',
        expires,
      );
      expect(far.code).toBe(1);
      expect(far.stderr).toMatch(/at most 3650 days|not an ISO 8601 date/);
    }
  }, 120_000);
});
