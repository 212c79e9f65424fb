/**
 * The abort signal of one request attempt: aborted when the caller's signal aborts, or when the
 * attempt waits on the network longer than the time limit. The timer runs only while the client
 * waits for the server (`start`/`pause`), so a slow consumer of a streamed listing never times out,
 * while a server that stops sending data does (an idle timeout between chunks).
 */
export class AttemptTimer {
  private readonly controller = new AbortController();
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly onOuterAbort = () => this.controller.abort(this.outer?.reason);
  /** Whether the time limit (not the caller) ended the attempt. */
  timedOut = false;

  constructor(
    readonly timeoutMs: number,
    private readonly outer?: AbortSignal,
  ) {
    if (outer?.aborted) this.controller.abort(outer.reason);
    else outer?.addEventListener('abort', this.onOuterAbort, { once: true });
  }

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** Whether the caller aborted (then its reason is what to throw). */
  get callerAborted(): boolean {
    return this.outer?.aborted === true;
  }

  /** (Re)starts the time limit: the client now waits for the server. */
  start(): void {
    this.pause();
    if (!Number.isFinite(this.timeoutMs) || this.timeoutMs <= 0) return;
    this.timer = setTimeout(() => {
      this.timedOut = true;
      this.controller.abort(new Error(`no data within ${this.timeoutMs} ms`));
    }, this.timeoutMs);
  }

  /** Stops the time limit while the caller, not the server, has the turn. */
  pause(): void {
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** Ends the attempt on the client's side (the reader stopped early): pending reads are aborted. */
  cancel(): void {
    this.dispose();
    if (!this.controller.signal.aborted) this.controller.abort(new Error('the reader stopped early'));
  }

  /** Ends the attempt's timer and detaches from the caller's signal. */
  dispose(): void {
    this.pause();
    this.outer?.removeEventListener('abort', this.onOuterAbort);
  }
}
