import { createHash } from 'node:crypto';
import { readFileSync, readlinkSync } from 'node:fs';
import { hostname } from 'node:os';

/**
 * Which processes this one can tell alive or gone: files left by a killed writer (temporary files,
 * a sync's lock) are judged by the PID they name, which means something only within one process
 * space, and by the life of the process of that PID.
 */

const hash = (text: string, length: number) =>
  createHash('sha256').update(text).digest('hex').slice(0, length);

function readOr(path: string, fallback = ''): string {
  try {
    return readFileSync(path, 'utf8').trim();
  } catch {
    return fallback; // absent or unreadable (other systems, many containers)
  }
}

function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid'); // e.g. "pid:[4026531836]"
  } catch {
    return ''; // not Linux: the host name alone
  }
}

/** `compute`'s value, computed at the first call only. */
export function once<T>(compute: () => T): () => T {
  let value: { v: T } | undefined;
  return () => (value ??= { v: compute() }).v;
}

/**
 * The processes whose PIDs this one can check: this host (its name and machine id) and, on Linux,
 * this PID namespace. Two containers may share a host name (host networking, one pod) and a folder
 * while each sees only its own processes: a PID of the other one looks gone from here. And the
 * host's own PID namespace has the same number on every Linux machine: two machines of one host
 * name (cloned VMs on a shared folder) are told apart by their machine id. A short hash.
 */
export const processSpace = once(() => {
  const machine = readOr('/etc/machine-id') || readOr('/var/lib/dbus/machine-id');
  return hash(`${hostname()}\0${pidNamespace()}\0${machine}`, 12);
});

/** The process space as versions before the machine id counted it: their files and locks are ours too. */
export const earlierProcessSpace = once(() => hash(`${hostname()}\0${pidNamespace()}`, 12));

/** This boot of this machine (Linux's boot id), six hex digits; undefined where it cannot be read. */
const bootTag = once(() => {
  const boot = readOr('/proc/sys/kernel/random/boot_id');
  return boot ? hash(boot, 6) : undefined;
});

/** Width of `processLife()`: the boot's six digits and the start time's eleven. */
export const LIFE_LENGTH = 17;

/**
 * This process among the processes that had its PID, the same in every thread and every copy of
 * this module: this boot and the process's start time since it (Linux's /proc/self/stat). So a
 * file or lock naming this PID from an earlier life of it (a restarted container's PID 1) is told
 * from this process's own. Undefined where these cannot be read: a file naming this PID is then
 * always taken for this process's own.
 */
export const processLife = once((): string | undefined => {
  const boot = bootTag();
  const stat = readOr('/proc/self/stat');
  // The command name (field 2) may hold spaces and parentheses: fields are counted after its ')'.
  const start = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
  if (boot === undefined || !start || !/^\d+$/.test(start)) return undefined;
  return `${boot}${Number(start)
    .toString(36)
    .padStart(LIFE_LENGTH - 6, '0')}`;
});

/**
 * Whether `life` (of a file or a lock that names this process's PID) is an earlier process's:
 * of this boot, and not this process's. Of another boot or unknown: it cannot be told (a machine
 * of the same process space may have a process of this PID too), so it is not.
 */
export function earlierLifeOfThisPid(life: string | undefined): boolean {
  const mine = processLife();
  return mine !== undefined && life !== undefined && life.slice(0, 6) === mine.slice(0, 6) && life !== mine;
}

/**
 * Whether the writer of a file or lock is gone, the file naming its PID and life: of this process
 * space (`this`), or of it as earlier versions counted it, without a life (`earlier`). Another
 * process of this PID is told only by its life in this boot; any other by whether its PID runs.
 */
export function writerGone(pid: number, life: string | undefined, space: 'this' | 'earlier'): boolean {
  if (pid === process.pid) return space === 'this' && earlierLifeOfThisPid(life);
  return !processAlive(pid);
}

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
