import { mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { chooseEntry } from '../bin/entry.js';

const root = mkdtempSync(join(tmpdir(), 'rxs-entry-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let made = 0;

/** A workspace with the CLI's and an SDK package's (the exchange's) build files at the given times (seconds; absent: none). */
function workspace(times: {
  bundle?: number;
  compiled?: number;
  cliBuild?: number;
  exchangeBuild?: number;
  install?: number;
}) {
  const dir = join(root, `w${++made}`);
  const cli = join(dir, 'packages', 'cli');
  mkdirSync(join(cli, 'dist', 'bundle'), { recursive: true });
  mkdirSync(join(dir, 'packages', 'exchange'), { recursive: true });
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  const files = {
    bundle: join(cli, 'dist', 'bundle', 'bin.js'),
    compiled: join(cli, 'dist', 'bin.js'),
    cliBuild: join(cli, 'tsconfig.tsbuildinfo'),
    exchangeBuild: join(dir, 'packages', 'exchange', 'tsconfig.tsbuildinfo'),
    install: join(dir, 'node_modules', '.package-lock.json'),
  };
  for (const [name, time] of Object.entries(times)) {
    const file = files[name as keyof typeof files];
    writeFileSync(file, '');
    utimesSync(file, time, time);
  }
  const chosen = chooseEntry(pathToFileURL(`${cli}/`));
  return chosen === undefined
    ? 'none'
    : chosen.pathname.endsWith('/dist/bundle/bin.js')
      ? 'bundle'
      : 'compiled';
}

describe('which build rxs runs', () => {
  it('the bundle when no compilation came after it', () => {
    expect(workspace({ bundle: 2000, compiled: 1000, cliBuild: 1000, exchangeBuild: 1000 })).toBe('bundle');
    expect(workspace({ bundle: 2000, compiled: 1000 })).toBe('bundle'); // installed: no build info
  });

  it('the compiled modules when the CLI or an SDK package it holds was compiled after the bundle (a stale bundle never runs)', () => {
    expect(workspace({ bundle: 2000, compiled: 3000, cliBuild: 3000, exchangeBuild: 1000 })).toBe('compiled');
    expect(workspace({ bundle: 2000, compiled: 1000, cliBuild: 1000, exchangeBuild: 3000 })).toBe('compiled');
    expect(workspace({ compiled: 1000, cliBuild: 1000 })).toBe('compiled');
  });

  it('the compiled modules after an npm install (the bundle holds copies of packages), or on a tie of times', () => {
    expect(workspace({ bundle: 2000, compiled: 1000, cliBuild: 1000, install: 1500 })).toBe('bundle');
    expect(workspace({ bundle: 2000, compiled: 1000, cliBuild: 1000, install: 3000 })).toBe('compiled');
    expect(workspace({ bundle: 2000, compiled: 2000, cliBuild: 2000, exchangeBuild: 1000 })).toBe('compiled');
  });

  it('nothing when neither is built (rxs then says to build)', () => {
    expect(workspace({})).toBe('none');
    expect(workspace({ bundle: 1000, exchangeBuild: 2000 })).toBe('none');
  });
});
