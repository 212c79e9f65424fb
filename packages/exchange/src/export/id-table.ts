/**
 * A set of strings, each with the record id that claimed it, in flat typed arrays: about 37 bytes
 * per entry at a million entries, where a Map of strings takes about 200. Exports check that every
 * readable id is unique with it, so the check costs little next to the records streaming through.
 *
 * Entries are kept as a 64-bit hash of the string, not the string: two different strings with the
 * same hash (odds about 1 in 10^8 at a million entries) would read as one. The owner is kept whole
 * (24 hex record ids as 12 bytes), so a reported clash always names both records.
 */
export class ClaimTable {
  private capacity = 1024;
  private hashHi = new Uint32Array(this.capacity);
  private hashLo = new Uint32Array(this.capacity);
  /** Ordinal + 1 of the entry in each slot; 0 = empty. */
  private slots = new Uint32Array(this.capacity);
  private owners = new Uint8Array(12 * 1024);
  /** Owners that are not 24 hex characters, by ordinal (never from the service, kept for other sources). */
  private readonly otherOwners = new Map<number, string>();
  private count = 0;

  /** The owner that claimed `key` before, or undefined after claiming it for `owner`. */
  claim(key: string, owner: string): string | undefined {
    const [hi, lo] = hash64(key);
    const entry = this.entryOf(hi, lo);
    if (entry !== 0) return this.ownerOf(entry - 1);
    this.insert(hi, lo, this.count);
    this.storeOwner(this.count, owner);
    this.count++;
    if (this.count * 4 > this.capacity * 3) this.grow();
    return undefined;
  }

  /** The owner that claimed `key`, if any (nothing is claimed). */
  find(key: string): string | undefined {
    const [hi, lo] = hash64(key);
    const entry = this.entryOf(hi, lo);
    return entry === 0 ? undefined : this.ownerOf(entry - 1);
  }

  /** The entry (ordinal + 1) of the key of this hash, or 0 when none claimed it. */
  private entryOf(hi: number, lo: number): number {
    const mask = this.capacity - 1;
    for (let slot = (lo ^ hi) & mask; ; slot = (slot + 1) & mask) {
      const entry = this.slots[slot]!;
      if (entry === 0 || (this.hashHi[slot] === hi && this.hashLo[slot] === lo)) return entry;
    }
  }

  private insert(hi: number, lo: number, ordinal: number): void {
    const mask = this.capacity - 1;
    let slot = (lo ^ hi) & mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & mask;
    this.hashHi[slot] = hi;
    this.hashLo[slot] = lo;
    this.slots[slot] = ordinal + 1;
  }

  private grow(): void {
    const { hashHi, hashLo, slots } = this;
    this.capacity *= 2;
    this.hashHi = new Uint32Array(this.capacity);
    this.hashLo = new Uint32Array(this.capacity);
    this.slots = new Uint32Array(this.capacity);
    for (let i = 0; i < slots.length; i++)
      if (slots[i] !== 0) this.insert(hashHi[i]!, hashLo[i]!, slots[i]! - 1);
  }

  private storeOwner(ordinal: number, owner: string): void {
    if (this.owners.length < 12 * (ordinal + 1)) {
      const larger = new Uint8Array(this.owners.length * 2);
      larger.set(this.owners);
      this.owners = larger;
    }
    if (/^[0-9a-f]{24}$/.test(owner)) this.owners.set(Buffer.from(owner, 'hex'), 12 * ordinal);
    else this.otherOwners.set(ordinal, owner);
  }

  private ownerOf(ordinal: number): string {
    return (
      this.otherOwners.get(ordinal) ??
      Buffer.from(this.owners.subarray(12 * ordinal, 12 * ordinal + 12)).toString('hex')
    );
  }
}

/** A 64-bit hash of a string, as two unsigned 32-bit halves (FNV-1a beside a Murmur-style mix). */
export function hash64(key: string): [number, number] {
  let hi = 0x811c9dc5;
  let lo = 0x9747b28c ^ key.length;
  for (let i = 0; i < key.length; i++) {
    const c = key.charCodeAt(i);
    hi = Math.imul(hi ^ c, 0x01000193);
    lo = Math.imul(lo ^ c, 0x5bd1e995);
    lo ^= lo >>> 13;
  }
  return [hi >>> 0, lo >>> 0];
}

/**
 * How many times each string was added, in flat typed arrays (about 24 bytes per entry at a
 * million): an import counts the ids of its rows with it, so a file of a million rows holds
 * a few tens of megabytes, not a Map of a million strings. Kept by 64-bit hash, as ClaimTable.
 */
export class HashedCounts {
  private capacity = 1024;
  private hashHi = new Uint32Array(this.capacity);
  private hashLo = new Uint32Array(this.capacity);
  /** The count of the entry in each slot; 0 = empty. */
  private counts = new Uint32Array(this.capacity);
  private size = 0;

  /** Counts `key` once more; returns how many times it was counted before. */
  add(key: string): number {
    const [hi, lo] = hash64(key);
    const slot = this.slotOf(hi, lo);
    const before = this.counts[slot]!;
    if (before === 0) {
      this.hashHi[slot] = hi;
      this.hashLo[slot] = lo;
      this.size++;
    }
    this.counts[slot] = before + 1;
    if (this.size * 4 > this.capacity * 3) this.grow();
    return before;
  }

  count(key: string): number {
    const [hi, lo] = hash64(key);
    return this.counts[this.slotOf(hi, lo)]!;
  }

  /** The slot holding the key of this hash, or the empty slot where it would go. */
  private slotOf(hi: number, lo: number): number {
    const mask = this.capacity - 1;
    let slot = (lo ^ hi) & mask;
    while (this.counts[slot] !== 0 && (this.hashHi[slot] !== hi || this.hashLo[slot] !== lo))
      slot = (slot + 1) & mask;
    return slot;
  }

  private grow(): void {
    const { hashHi, hashLo, counts } = this;
    this.capacity *= 2;
    this.hashHi = new Uint32Array(this.capacity);
    this.hashLo = new Uint32Array(this.capacity);
    this.counts = new Uint32Array(this.capacity);
    const mask = this.capacity - 1;
    for (let i = 0; i < counts.length; i++) {
      if (counts[i] === 0) continue;
      let slot = (hashLo[i]! ^ hashHi[i]!) & mask;
      while (this.counts[slot] !== 0) slot = (slot + 1) & mask;
      this.hashHi[slot] = hashHi[i]!;
      this.hashLo[slot] = hashLo[i]!;
      this.counts[slot] = counts[i]!;
    }
  }
}
