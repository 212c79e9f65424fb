import { TooManyRequests } from './rate-limit.js';

/**
 * Expensive reads running at once, server-wide: web exports, traceability reports, baseline
 * comparisons, approval impact checks, and other reads over whole topics or histories. Each reads
 * every record it covers (an export also writes its whole file before answering, so a failure is a
 * visible error, never a broken download), which takes the CPU, memory and disk that every other
 * request needs too: a few at once per server, and fewer per user, so one person clicking again and
 * again cannot slow everyone else down. They share one pool, whose number per server is
 * RXS_WEB_EXPORTS.
 */
export const DEFAULT_EXPORTS_AT_ONCE = 4;
/** Per user: a second one (another topic, another format, a comparison) may run beside the first. */
export const EXPORTS_PER_USER = 2;
/** What Retry-After says: a typical export or comparison of a topic takes about this long. */
const RETRY_AFTER_SECONDS = 5;

/** What the slots are for: the setting of their number per server, the defaults, and the words of a 429. */
export interface SlotKind {
  variable: string;
  atOnce: number;
  perUser: number;
  /** Plural noun: "imports or checks". */
  things: string;
  /** What the user does again once a slot is free: "send the file again". */
  again: string;
  /** What the server does with them: "running". */
  doing: string;
}

export const EXPORT_SLOTS: SlotKind = {
  variable: 'RXS_WEB_EXPORTS',
  atOnce: DEFAULT_EXPORTS_AT_ONCE,
  perUser: EXPORTS_PER_USER,
  things: 'expensive reads (exports, reports, comparisons, impact checks, large histories, as-of listings)',
  again: 'ask again',
  doing: 'running',
};

/**
 * Web app imports at once (RXS_WEB_IMPORTS): each reads its whole file twice and writes its rows,
 * so a server runs two and a user one; the file is received before a slot is taken.
 */
export const IMPORT_SLOTS: SlotKind = {
  variable: 'RXS_WEB_IMPORTS',
  atOnce: 2,
  perUser: 1,
  things: 'imports or checks',
  again: 'send the file again',
  doing: 'running',
};

/**
 * `POST /records/bulk` requests at once (RXS_BULK_WRITES): each writes up to a thousand records in
 * one transaction, which holds the database's write lock, so a server runs four and a user two
 * (what an import keeps in flight); the body is received before a slot is taken.
 */
export const BULK_WRITE_SLOTS: SlotKind = {
  variable: 'RXS_BULK_WRITES',
  atOnce: 4,
  perUser: 2,
  things: 'bulk writes',
  again: 'send the next one',
  doing: 'running',
};

export class ExportSlots {
  private running = 0;
  private readonly byUser = new Map<string, number>();

  /** Slots taken now, over all users. */
  get inUse(): number {
    return this.running;
  }

  constructor(
    readonly atOnce: number = DEFAULT_EXPORTS_AT_ONCE,
    readonly perUser: number = Math.min(EXPORTS_PER_USER, atOnce),
    private readonly kind: SlotKind = EXPORT_SLOTS,
  ) {}

  /** The number per server from the kind's variable (a whole number ≥ 1), else the default. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env, kind: SlotKind = EXPORT_SLOTS): ExportSlots {
    const text = env[kind.variable];
    const perUser = (atOnce: number) => Math.min(kind.perUser, atOnce);
    if (text === undefined || text.trim() === '')
      return new ExportSlots(kind.atOnce, perUser(kind.atOnce), kind);
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || value < 1 || !Number.isSafeInteger(value)) {
      throw new Error(`${kind.variable} must be a whole number ≥ 1 (${kind.things} at once), got "${text}".`);
    }
    return new ExportSlots(value, perUser(value), kind);
  }

  /** The user a slot is counted against: the same person in another tenant is another user. */
  static userOf(principal: { tenantId: string; userId: string }): string {
    return `${principal.tenantId}:${principal.userId}`;
  }

  /** Runs `work` holding a slot for `user` (429 and Retry-After when none is free), then gives it back. */
  async run<T>(user: string, work: () => Promise<T>): Promise<T> {
    const release = this.take(user);
    try {
      return await work();
    } finally {
      release();
    }
  }

  /** Takes a slot for `user`, or refuses with 429 and Retry-After; call the result when done. */
  take(user: string): () => void {
    const mine = this.byUser.get(user) ?? 0;
    if (mine >= this.perUser) {
      throw new TooManyRequests(
        `You have ${mine} ${this.kind.things} running already, the most at once. Wait for one to finish, then ${this.kind.again}.`,
        RETRY_AFTER_SECONDS,
      );
    }
    if (this.running >= this.atOnce) {
      throw new TooManyRequests(
        `The server is ${this.kind.doing} ${this.running} ${this.kind.things} already, the most at once (${this.kind.variable}). Try again in a few seconds.`,
        RETRY_AFTER_SECONDS,
      );
    }
    this.running++;
    this.byUser.set(user, mine + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.running--;
      const left = (this.byUser.get(user) ?? 1) - 1;
      if (left > 0) this.byUser.set(user, left);
      else this.byUser.delete(user);
    };
  }
}
