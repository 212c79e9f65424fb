/**
 * The whole RXS SDK in one import: the contract and its validation, the client, the exchange
 * (mapping, export, import, trace reports) and sync. Each part is also a package of its own.
 */
export * from '@rxs/contract';
export * from '@rxs/contract/validation';
export * from '@rxs/client';
export * from '@rxs/exchange';
export * from '@rxs/sync';
