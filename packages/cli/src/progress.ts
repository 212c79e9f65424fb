/**
 * A one-line progress display on a terminal (stderr), silent when stderr is not a terminal or when
 * quiet. Updates are throttled so drawing never slows the export down.
 */
export class Progress {
  private lastDraw = 0;
  private drawn = false;
  private readonly started = Date.now();
  private readonly enabled: boolean;

  constructor(options: { quiet?: boolean; stream?: NodeJS.WriteStream } = {}) {
    this.stream = options.stream ?? process.stderr;
    this.enabled = !options.quiet && this.stream.isTTY === true;
  }

  private readonly stream: NodeJS.WriteStream;

  update(text: string, force = false): void {
    if (!this.enabled) return;
    const now = Date.now();
    if (!force && now - this.lastDraw < 100) return;
    this.lastDraw = now;
    const width = Math.max(20, (this.stream.columns ?? 80) - 1);
    this.stream.write(`\r${text.slice(0, width).padEnd(width)}`);
    this.drawn = true;
  }

  records(topic: string, count: number): void {
    // Called as records arrive: nothing is formatted unless a line is due.
    if (!this.enabled || Date.now() - this.lastDraw < 100) return;
    const seconds = (Date.now() - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(count / seconds) : 0;
    this.update(`${topic}: ${count.toLocaleString('en-US')} records (${rate.toLocaleString('en-US')}/s)`);
  }

  /** A phase of work over rows (an import): formatted only when a line is due. */
  rows(phase: string, rows: number, total?: number): void {
    if (!this.enabled || Date.now() - this.lastDraw < 100) return;
    const of = total === undefined ? '' : ` of ${total.toLocaleString('en-US')}`;
    this.update(`${phase}: ${rows.toLocaleString('en-US')}${of} rows`);
  }

  /** Clears the line so regular output starts at column 0. */
  done(): void {
    if (this.enabled && this.drawn)
      this.stream.write(`\r${' '.repeat(Math.max(20, (this.stream.columns ?? 80) - 1))}\r`);
    this.drawn = false;
  }

  /** A message on its own line (warnings), without breaking the progress line. */
  note(message: string): void {
    this.done();
    this.stream.write(`${message}\n`);
  }
}
