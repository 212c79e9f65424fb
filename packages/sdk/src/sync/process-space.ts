import { createHash, randomBytes } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Which processes this one can tell alive or gone: files left by a killed writer (temporary files,
 * a sync's lock) are judged by the PID they name, which means something only within one process
 * space.
 */

/**
 * The processes whose PIDs this one can check: this host (its name and machine id) and, on Linux,
 * this PID namespace. Two
 * containers may share a host name (host networking, one pod) and a folder while each sees only
 * its own processes: a PID of the other one looks gone from here. A short hash, safe in file names.
 */
export const processSpace: () => string = (() => {
  let space: string | undefined;
  return () => {
    if (space === undefined) {
      let namespace = '';
      try {
        namespace = readlinkSync('/proc/self/ns/pid'); // e.g. "pid:[4026531836]"
      } catch {
        // Not Linux: the host name alone.
      }
      // The host's own PID namespace has the same number on every Linux machine: two machines of
      // one host name (cloned VMs, a shared folder) are told apart by their machine id.
      let machine = '';
      for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id'])
        try {
          machine = readFileSync(file, 'utf8').trim();
          if (machine) break;
        } catch {
          // Absent (many containers, other systems).
        }
      space = createHash('sha256')
        .update(`${hostname()}\0${namespace}\0${machine}`)
        .digest('hex')
        .slice(0, 12);
    }
    return space;
  };
})();

/** Whether a process with this id runs on this machine (one of another user's counts). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists, it belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * This process among those that had its PID: a random token, so that a file naming this PID that
 * this process did not write (an earlier process of the same PID, a restarted container's PID 1)
 * is told from its own.
 */
export const processLife: () => string = (() => {
  let life: string | undefined;
  return () => (life ??= randomBytes(4).toString('hex'));
})();
