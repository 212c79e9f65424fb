import { spawn, type ChildProcess } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { isAbandonedTemp, makeScratchFolder, tempNameParts, tempPath } from './temp-files.js';

// The same module, built, in another process: a writer that can be killed for real.
const built = fileURLToPath(new URL('../../dist/files/temp-files.js', import.meta.url));

/** A process that makes a scratch folder, writes into it and waits; resolves with the folder. */
function scratchWriter(parent: string): Promise<{ child: ChildProcess; folder: string }> {
  const script = `
    const { makeScratchFolder } = await import(${JSON.stringify(built)});
    const { writeFileSync } = await import('node:fs');
    const folder = await makeScratchFolder('rxs-export', ${JSON.stringify(parent)});
    writeFileSync(folder + '/rows.csv', 'half written');
    process.stdout.write(folder + '\\n');
    setInterval(() => {}, 1000);`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.endsWith('\n')) resolve({ child, folder: out.trim() });
    });
    child.on('exit', (code) => reject(new Error(`the writer exited (${code}) before making its folder`)));
  });
}

const ended = (child: ChildProcess) => new Promise((resolve) => child.once('exit', resolve));

describe('scratch folders', () => {
  let parent: string;
  const children: ChildProcess[] = [];
  beforeEach(() => {
    parent = mkdtempSync(join(tmpdir(), 'rxs-scratch-test-'));
  });
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
    rmSync(parent, { recursive: true, force: true });
  });

  it("are private, named as temporary files, and the next one removes a killed writer's but not a running one's", async () => {
    const killed = await scratchWriter(parent);
    const running = await scratchWriter(parent);
    children.push(killed.child, running.child);
    killed.child.kill('SIGKILL');
    await ended(killed.child);
    expect(existsSync(join(killed.folder, 'rows.csv'))).toBe(true);
    // Another program's folder of the same name and a file that only looks similar stay.
    writeFileSync(join(parent, 'rxs-export-abc123'), 'not ours');
    writeFileSync(join(parent, '.rxs-export.tmp'), 'not ours');

    const mine = await makeScratchFolder('rxs-export', parent);

    expect(existsSync(killed.folder)).toBe(false);
    expect(existsSync(join(running.folder, 'rows.csv'))).toBe(true);
    expect(readdirSync(parent).sort()).toEqual(
      ['.rxs-export.tmp', 'rxs-export-abc123', basename(running.folder), basename(mine)].sort(),
    );
    expect(statSync(mine).isDirectory()).toBe(true);
    expect(statSync(mine).mode & 0o777).toBe(0o700);
    expect(tempNameParts(basename(mine))).toMatchObject({ target: 'rxs-export', pid: process.pid });
    // Two at once in one process get two folders.
    expect(await makeScratchFolder('rxs-export', parent)).not.toBe(mine);
  });

  it("leave a gone writer's folder that another user owns, or that others may write in: removing it could be made to follow a swapped-in link", async () => {
    const killed = await scratchWriter(parent);
    children.push(killed.child);
    killed.child.kill('SIGKILL');
    await ended(killed.child);
    // Named as the killed writer's folders are (its PID, this process space), with other owners/modes.
    const named = (n: number) => join(parent, basename(killed.folder).replace(/\.tmp$/, `${n}.tmp`));
    const writable = named(1);
    mkdirSync(writable);
    chmodSync(writable, 0o777);
    const others = named(2);
    mkdirSync(others, { mode: 0o700 });
    const root = process.getuid?.() === 0;
    if (root) chownSync(others, 65534, 65534); // another user's (only root can make one here)
    expect(tempNameParts(basename(writable))?.pid).toBe(killed.child.pid);

    await makeScratchFolder('rxs-export', parent);

    expect(existsSync(killed.folder)).toBe(false);
    expect(existsSync(writable)).toBe(true);
    expect(existsSync(others)).toBe(root);
  });

  it('a temporary name stays within 255 bytes for a target of 255, and still names that target', () => {
    for (const name of ['r'.repeat(251) + '.csv', 'ü'.repeat(125) + '.csv']) {
      const temp = basename(tempPath(join(parent, name)));
      expect(Buffer.byteLength(temp)).toBeLessThanOrEqual(255);
      const gone = temp.replace(`.${process.pid}.`, '.4000000.');
      expect(isAbandonedTemp(gone, name)).toBe(true);
      expect(isAbandonedTemp(gone, 'r'.repeat(251) + '.tsv')).toBe(false);
    }
  });

  it('go to the system temporary folder unless told otherwise', async () => {
    const folder = await makeScratchFolder('rxs-scratch-test');
    try {
      expect(join(folder, '..')).toBe(tmpdir());
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
