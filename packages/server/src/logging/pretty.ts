import { Writable } from 'node:stream';

/** How `rxs serve` writes its log: JSON lines (for machines), readable lines (for a terminal), or by where it goes. */
export type LogFormat = 'json' | 'pretty' | 'auto';
export const LOG_FORMATS: readonly LogFormat[] = ['json', 'pretty', 'auto'];

const LEVELS: Record<number, string> = {
  10: 'TRACE',
  20: 'DEBUG',
  30: 'INFO ',
  40: 'WARN ',
  50: 'ERROR',
  60: 'FATAL',
};

/** Whether to write readable lines: asked for, or `auto` on a terminal. */
export function prettyLogs(format: LogFormat, stream: { isTTY?: boolean }): boolean {
  return format === 'pretty' || (format === 'auto' && stream.isTTY === true);
}

/** Requests whose arrival was logged and whose completion was not yet: at most this many remembered. */
const MAX_IN_FLIGHT = 10_000;

/**
 * Pino JSON lines as readable lines: `12:34:56 INFO  GET /records/?… 200 12 ms [request id]` for a
 * completed request (method and URL remembered from its arrival, which is not shown itself),
 * `time LEVEL message: error` otherwise; a line that is not JSON passes as it is.
 */
export class PrettyLines {
  private readonly inFlight = new Map<string, string>();

  line(text: string): string | undefined {
    let entry: Record<string, unknown>;
    try {
      entry = JSON.parse(text) as Record<string, unknown>;
    } catch {
      return text;
    }
    const reqId = typeof entry.reqId === 'string' ? entry.reqId : undefined;
    const req = entry.req as { method?: string; url?: string } | undefined;
    if (entry.msg === 'incoming request') {
      if (reqId && req?.method) {
        if (this.inFlight.size >= MAX_IN_FLIGHT) this.inFlight.delete(this.inFlight.keys().next().value!);
        this.inFlight.set(reqId, `${req.method} ${req.url ?? ''}`);
      }
      return undefined;
    }
    const time =
      typeof entry.time === 'number' ? new Date(entry.time).toISOString().slice(11, 19) : '--:--:--';
    const level = LEVELS[entry.level as number] ?? String(entry.level);
    const id = reqId ? ` [${reqId}]` : '';
    const res = entry.res as { statusCode?: number } | undefined;
    if (entry.msg === 'request completed' && res) {
      const what =
        (reqId && this.inFlight.get(reqId)) ?? (req?.method ? `${req.method} ${req.url ?? ''}` : '');
      if (reqId) this.inFlight.delete(reqId);
      const ms = typeof entry.responseTime === 'number' ? ` ${Math.round(entry.responseTime)} ms` : '';
      return `${time} ${level} ${what ? `${what} ` : ''}${res.statusCode ?? ''}${ms}${id}`;
    }
    const err = entry.err as { message?: string } | undefined;
    const message = [entry.msg, err?.message]
      .filter((part) => typeof part === 'string' && part !== '')
      .join(': ');
    return `${time} ${level} ${message}${id}`;
  }
}

/** A stream pino writes JSON lines to, passing them on to `out` as readable lines. */
export function prettyStream(out: NodeJS.WritableStream): Writable {
  const pretty = new PrettyLines();
  let rest = '';
  return new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      const lines = (rest + chunk.toString()).split('\n');
      rest = lines.pop() ?? '';
      for (const line of lines) {
        if (line === '') continue;
        const shown = pretty.line(line);
        if (shown !== undefined) out.write(`${shown}\n`);
      }
      done();
    },
  });
}
