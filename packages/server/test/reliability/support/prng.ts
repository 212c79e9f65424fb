/** A small seeded PRNG (mulberry32), so generated workloads are the same on every run. */
export class Prng {
  private state: number;
  constructor(seed: number) {
    this.state = seed >>> 0;
  }
  next(): number {
    let t = (this.state = (this.state + 0x6d2b79f5) >>> 0);
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }
  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('pick from an empty list');
    return items[Math.floor(this.next() * items.length)]!;
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  /** Text with multi-byte characters (accents, CJK, emoji, a combining mark, RTL). */
  text(maxLength: number): string {
    const alphabet = [
      'a',
      'b',
      'Z',
      ' ',
      '7',
      'é',
      'ß',
      '中',
      '文',
      '😀',
      'e\u0301',
      'ש',
      '\n',
      '"',
      '\\',
      '\t',
    ];
    const length = this.int(0, maxLength);
    let out = '';
    for (let i = 0; i < length; i++) out += this.pick(alphabet);
    return out;
  }
}
