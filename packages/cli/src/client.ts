import { createClient, type RxsClient } from '@rxs/client';
import type { Connection } from './connection.js';

export interface ClientTuning {
  timeoutMs?: number;
  retries?: number;
  traceConcurrency?: number;
  /** Told of each retry (the CLI shows it on the progress line). */
  onRetry?: (message: string) => void;
}

/** The sdk client of a resolved connection, as every command that talks to the services uses it. */
export function clientFor(connection: Connection, tuning: ClientTuning = {}): RxsClient {
  return createClient({
    techdocUrl: connection.techdocUrl,
    recordsUrl: connection.recordsUrl,
    tracerUrl: connection.tracerUrl,
    apiKey: connection.apiKey,
    timeoutMs: tuning.timeoutMs,
    retries: tuning.retries,
    traceConcurrency: tuning.traceConcurrency,
    onRetry: tuning.onRetry && ((event) => tuning.onRetry!(`rxs: retrying ${describeRetry(event)}`)),
  });
}

function describeRetry(event: {
  service?: string;
  url?: string;
  attempt?: number;
  delayMs?: number;
  reason?: string;
}): string {
  const parts = [event.service, event.url].filter(Boolean).join(' ');
  const wait = event.delayMs !== undefined ? ` in ${(event.delayMs / 1000).toFixed(1)} s` : '';
  return `${parts} (attempt ${event.attempt ?? '?'}${wait}): ${event.reason ?? 'transient failure'}`;
}
