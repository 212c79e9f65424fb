import { TooManyRequests } from '../http/rate-limit.js';

/**
 * Web app exports running at once. Each writes its whole file before answering (a failure must be a
 * visible error, never a broken download), which takes the CPU and disk that every other request
 * needs too: a few at once per server, and fewer per user, so one person clicking Download again and
 * again cannot slow everyone else down. RXS_WEB_EXPORTS sets the number per server.
 */
export const DEFAULT_EXPORTS_AT_ONCE = 4;
/** Per user: a second download (another topic, another format) may run beside the first. */
export const EXPORTS_PER_USER = 2;
/** What Retry-After says: a typical export of a topic takes about this long. */
const RETRY_AFTER_SECONDS = 5;

export class ExportSlots {
  private running = 0;
  private readonly byUser = new Map<string, number>();

  constructor(
    readonly atOnce: number = DEFAULT_EXPORTS_AT_ONCE,
    readonly perUser: number = Math.min(EXPORTS_PER_USER, atOnce),
  ) {}

  /** The number per server from RXS_WEB_EXPORTS (a whole number ≥ 1), else the default. */
  static fromEnv(env: NodeJS.ProcessEnv = process.env): ExportSlots {
    const text = env.RXS_WEB_EXPORTS;
    if (text === undefined || text.trim() === '') return new ExportSlots();
    const value = Number(text);
    if (!/^\d+$/.test(text.trim()) || value < 1 || !Number.isSafeInteger(value)) {
      throw new Error(`RXS_WEB_EXPORTS must be a whole number ≥ 1 (exports at once), got "${text}".`);
    }
    return new ExportSlots(value);
  }

  /** Takes a slot for `user`, or refuses with 429 and Retry-After; call the result when done. */
  take(user: string): () => void {
    const mine = this.byUser.get(user) ?? 0;
    if (mine >= this.perUser) {
      throw new TooManyRequests(
        `You have ${mine} exports running already, the most at once. Wait for one to finish, then download again.`,
        RETRY_AFTER_SECONDS,
      );
    }
    if (this.running >= this.atOnce) {
      throw new TooManyRequests(
        `The server is writing ${this.running} exports already, the most at once (RXS_WEB_EXPORTS). Try again in a few seconds.`,
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
