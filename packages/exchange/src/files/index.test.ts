import {
  chownSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { makeScratchFolder, openAtomic, removeLeftovers, tempPath, writeFileAtomic } from './index.js';

// Temporary names are random; a test that plants a link at the next one makes them predictable.
const names = vi.hoisted(() => ({ fixed: false }));
vi.mock('node:crypto', async (importOriginal) => {
  const crypto = await importOriginal<typeof import('node:crypto')>();
  return {
    ...crypto,
    randomBytes: (size: number) => (names.fixed ? Buffer.alloc(size) : crypto.randomBytes(size)),
  };
});

const root = mkdtempSync(join(tmpdir(), 'rxs-files-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let folders = 0;
const freshFolder = () => {
  const folder = join(root, `f-${++folders}`);
  mkdirSync(folder);
  return folder;
};
const DAY_AGO = (Date.now() - 25 * 60 * 60 * 1000) / 1000;

describe('openAtomic', () => {
  it('replaces the target whole on commit, and leaves nothing else', async () => {
    const folder = freshFolder();
    const target = join(folder, 'out.csv');
    writeFileSync(target, 'previous\n');
    const file = await openAtomic(target, 0o600);
    file.stream.write('new ');
    expect(readFileSync(target, 'utf8')).toBe('previous\n');
    file.stream.end('content\n');
    await file.commit();
    expect(readFileSync(target, 'utf8')).toBe('new content\n');
    expect(statSync(target).mode & 0o777).toBe(0o600);
    expect(readdirSync(folder)).toEqual(['out.csv']);
    await writeFileAtomic(join(folder, 'state.json'), '{}\n');
    expect(readdirSync(folder).sort()).toEqual(['out.csv', 'state.json']);
  });

  it('leaves the target untouched and removes its temporary file on abort, or on a write error', async () => {
    const folder = freshFolder();
    const target = join(folder, 'out.csv');
    writeFileSync(target, 'previous\n');
    const aborted = await openAtomic(target);
    aborted.stream.write('half');
    await aborted.abort();
    const failed = await openAtomic(target);
    failed.stream.write('half');
    failed.stream.destroy(new Error('the disk is gone'));
    await expect(failed.commit()).rejects.toThrow('the disk is gone');
    await failed.abort(); // settled already: nothing more
    expect(readFileSync(target, 'utf8')).toBe('previous\n');
    expect(readdirSync(folder)).toEqual(['out.csv']);
  });

  it('never follows a link planted at the name of its temporary file (O_EXCL|O_NOFOLLOW)', async () => {
    const folder = freshFolder();
    const victim = join(folder, 'authorized_keys');
    writeFileSync(victim, 'ssh-ed25519 AAAA...\n');
    names.fixed = true;
    try {
      const planted = tempPath(join(folder, 'out.csv'));
      symlinkSync(victim, planted);
      await expect(openAtomic(join(folder, 'out.csv'))).rejects.toThrow(/EEXIST/);
    } finally {
      names.fixed = false;
    }
    expect(readFileSync(victim, 'utf8')).toBe('ssh-ed25519 AAAA...\n');
  });

  it('names a temporary file within 255 bytes for a target name of 255', () => {
    for (const name of ['r'.repeat(251) + '.csv', 'ü'.repeat(125) + '.csv', '😀'.repeat(60) + '.csv']) {
      const temp = tempPath(join(root, name));
      expect(Buffer.byteLength(basename(temp))).toBeLessThanOrEqual(255);
      expect(dirname(temp)).toBe(root);
    }
  });
});

describe('leftovers of killed writers', () => {
  it("are removed when a day old: this program's temporary files and folders only, not fresh ones", async () => {
    const folder = freshFolder();
    const old = [basename(tempPath(join(folder, 'out.csv'))), basename(tempPath(join(folder, 'rxs-export')))];
    const fresh = basename(tempPath(join(folder, 'out.csv')));
    const others = ['.out.csv.tmp', 'out.csv', '.out.csv.rxs-short.tmp'];
    writeFileSync(join(folder, old[0]!), 'half written');
    mkdirSync(join(folder, old[1]!));
    writeFileSync(join(folder, old[1]!, 'rows.csv'), 'half written');
    for (const name of [fresh, ...others]) writeFileSync(join(folder, name), 'x');
    for (const name of [...old, ...others]) utimesSync(join(folder, name), DAY_AGO, DAY_AGO);
    await removeLeftovers(folder);
    expect(readdirSync(folder).sort()).toEqual([fresh, ...others].sort());
  });

  it("of a target its writer holds a lock over are removed at once, only that target's", async () => {
    const folder = freshFolder();
    const target = join(folder, 'out.csv');
    const killed = basename(tempPath(target));
    const other = basename(tempPath(join(folder, 'other.csv')));
    for (const name of [killed, other]) writeFileSync(join(folder, name), 'half written');
    const write = await openAtomic(target, undefined, true);
    expect(readdirSync(folder)).not.toContain(killed);
    expect(readdirSync(folder)).toContain(other);
    write.stream.end('whole');
    await write.commit();
    expect(readFileSync(target, 'utf8')).toBe('whole');
    expect(readdirSync(folder).sort()).toEqual(['out.csv', other].sort());
  });

  it.skipIf(process.getuid?.() !== 0)("leave another user's (run as root to make one)", async () => {
    const folder = freshFolder();
    const theirs = join(folder, basename(tempPath(join(folder, 'out.csv'))));
    writeFileSync(theirs, 'x');
    chownSync(theirs, 65534, 65534);
    utimesSync(theirs, DAY_AGO, DAY_AGO);
    await removeLeftovers(folder);
    expect(readdirSync(folder)).toEqual([basename(theirs)]);
  });
});

describe('scratch folders', () => {
  it('are private, named as temporary files, one for each call, and sweep the leftovers of their folder', async () => {
    const parent = freshFolder();
    const killed = await makeScratchFolder('rxs-export', parent);
    utimesSync(killed, DAY_AGO, DAY_AGO);
    const mine = await makeScratchFolder('rxs-export', parent);
    expect(statSync(mine).mode & 0o777).toBe(0o700);
    expect(basename(mine)).toMatch(/^\.rxs-export\.rxs-[0-9a-f]{16}\.tmp$/);
    expect(await makeScratchFolder('rxs-export', parent)).not.toBe(mine);
    expect(readdirSync(parent)).not.toContain(basename(killed));
  });

  it('go to the system temporary folder unless told otherwise', async () => {
    const folder = await makeScratchFolder('rxs-scratch-test');
    rmSync(folder, { recursive: true, force: true });
    expect(dirname(folder)).toBe(tmpdir());
  });
});
