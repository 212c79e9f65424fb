/**
 * A growable column of 32-bit integers: 4 bytes an entry, where a JavaScript array of numbers takes
 * 8 and an object per row far more. The compact tables behind traces keep their numbers in these.
 */
export class IntColumn {
  private data = new Int32Array(1024);
  private count = 0;

  get length(): number {
    return this.count;
  }

  push(value: number): void {
    if (this.count === this.data.length) {
      const larger = new Int32Array(this.data.length * 2);
      larger.set(this.data);
      this.data = larger;
    }
    this.data[this.count++] = value;
  }

  at(index: number): number {
    return this.data[index]!;
  }

  set(index: number, value: number): void {
    this.data[index] = value;
  }
}
