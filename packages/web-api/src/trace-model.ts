/**
 * `GET`/`PUT /api/trace-model`: the tenant's trace model as the tracer service has it. The browser
 * reads and sends the contract's own shapes, so the service's rules and 422 items (`loc` under
 * `["body", "roles", index, field]`) reach the page unchanged.
 */
export { TraceModel, TraceModelPut } from '@rxs/contract';
export type { TraceModelRelationType, TraceModelTopic, TraceRole, TraceSourceEnd } from '@rxs/contract';
