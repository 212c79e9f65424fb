/**
 * The exporter's part of the SDK (`@rxs/sdk/exporter`): the client, the export part of the exchange
 * and sync, with the contract's types but not its schemas (TypeBox), nor import, validation and
 * trace reports. What `rxs export` and `rxs sync` load, so that a poll starts in a fraction of the
 * time the whole SDK takes (docs/benchmarks.md, section 3: the unchanged poll).
 */
export type * from '@rxs/contract';
export * from '@rxs/contract/plain';
export * from '@rxs/client';
export * from '@rxs/exchange/export';
export * from '@rxs/sync';
