import { compareIds } from './json-values.js';
import { readJsonLines } from './jsonl.js';

/**
 * One side of a merge-join: the items of a JSON lines file sorted by id, read one at a time with a
 * look at the next. It checks the order as it reads, so a damaged file fails loudly instead of
 * producing a wrong comparison.
 */
export class SortedCursor<T> {
  private readonly items: AsyncGenerator<T> | undefined;
  private head: T | undefined;
  private loaded = false;
  private lastId: string | undefined;

  /** `path` undefined: an empty side (a topic the previous snapshot did not have). */
  constructor(
    private readonly path: string | undefined,
    private readonly idOf: (item: T) => string,
  ) {
    this.items = path === undefined ? undefined : readJsonLines<T>(path);
  }

  /** The next item, not taken. */
  async peek(): Promise<T | undefined> {
    if (!this.loaded) {
      this.loaded = true;
      const next = await this.items?.next();
      this.head = next && !next.done ? next.value : undefined;
      if (this.head !== undefined) {
        const id = this.idOf(this.head);
        if (typeof id !== 'string' || (this.lastId !== undefined && compareIds(this.lastId, id) >= 0))
          throw new Error(
            `${this.path}: ids out of order ("${String(id)}" after "${this.lastId}"); the sync state is damaged.`,
          );
        this.lastId = id;
      }
    }
    return this.head;
  }

  /** The next item, taken. */
  async take(): Promise<T | undefined> {
    const item = await this.peek();
    this.loaded = false;
    return item;
  }

  /** Stops reading (closes the file). */
  async close(): Promise<void> {
    await this.items?.return(undefined);
  }
}
