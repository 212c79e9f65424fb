import type { ValidationErrorItem } from '../errors.js';
import type { Loc } from './data-path.js';

/** Default cap on the items of one answer: enough to fix a form, bounded for hostile input. */
export const DEFAULT_MAX_PROBLEMS = 100;

/**
 * Collects the problems of one validation in the order they are found (schema order), at most
 * `max` of them; past the cap one last item of type `too_many_errors` says so. The same `loc`
 * and `type` are reported once.
 */
export class Problems {
  private readonly items: ValidationErrorItem[] = [];
  private readonly seen = new Set<string>();
  private overflowed = false;

  constructor(
    private readonly prefix: Loc,
    private readonly max: number = DEFAULT_MAX_PROBLEMS,
  ) {}

  /** True once the cap is reached: callers may stop looking. */
  get full(): boolean {
    return this.overflowed;
  }

  add(loc: Loc, msg: string, type: string): void {
    if (this.overflowed) return;
    const id = JSON.stringify([loc, type]);
    if (this.seen.has(id)) return;
    if (this.items.length >= this.max) {
      this.overflowed = true;
      this.items.push({
        loc: [...this.prefix],
        msg: `Too many problems: only the first ${this.max} are listed. Fix them and submit again to see the rest.`,
        type: 'too_many_errors',
      });
      return;
    }
    this.seen.add(id);
    this.items.push({ loc: [...loc], msg, type });
  }

  list(): ValidationErrorItem[] {
    return this.items;
  }
}
