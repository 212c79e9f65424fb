import type { TraceModel, TraceModelPut } from '@rxs/web-api';
import { api } from './api';

/** The tenant's trace model: its roles (topics with their current names) and its version. */
export function getTraceModel(): Promise<TraceModel> {
  return api.get<TraceModel>('/trace-model');
}

/**
 * Replaces the whole model, based on `version` as read: a model changed since is an ApiError 409,
 * problems of the roles are its 422 items (`loc` `["body", "roles", index, field, ...]`).
 */
export function putTraceModel(
  model: Pick<TraceModelPut, 'roles' | 'change_reason'>,
  version: number,
): Promise<TraceModel> {
  return api.put<TraceModel>('/trace-model', { ...model, version });
}
