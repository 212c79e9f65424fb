import type { TraceRole } from '@rxs/contract';
import type { Principal } from '../auth/principal.js';
import type { Services } from '../services/index.js';
import type { DemoTopic } from './demo-info.js';

type TopicKey = string;

/**
 * The demo's V-model as its trace model, in the order of the V: each role over the relation type
 * the demo's traces already have (seed.ts, v-model.ts), so the model names them without changing one.
 */
const ROLES: (Omit<TraceRole, 'from' | 'to'> & { from: TopicKey; to: TopicKey })[] = [
  {
    id: 'derives',
    forward_name: 'derives from',
    backward_name: 'refined by',
    from: 'systemRequirements',
    to: 'userNeeds',
    trace_source: 'to',
    relation_type: 'contributes_to',
  },
  {
    id: 'implements',
    forward_name: 'implements',
    backward_name: 'implemented by',
    from: 'designOutputs',
    to: 'systemRequirements',
    trace_source: 'to',
    relation_type: 'is_related',
  },
  {
    id: 'verifies',
    forward_name: 'verifies',
    backward_name: 'verified by',
    from: 'verificationTests',
    to: 'systemRequirements',
    trace_source: 'from',
    relation_type: 'is_related',
  },
  {
    id: 'validates',
    forward_name: 'validates',
    backward_name: 'validated by',
    from: 'validationStudies',
    to: 'userNeeds',
    trace_source: 'from',
    relation_type: 'is_related',
  },
  {
    id: 'realizes-control',
    forward_name: 'realizes',
    backward_name: 'realized by',
    from: 'designOutputs',
    to: 'riskControls',
    trace_source: 'to',
    relation_type: 'is_related',
  },
  {
    id: 'cites-evidence',
    forward_name: 'cites as evidence',
    backward_name: 'evidence for',
    from: 'releaseRecords',
    to: 'verificationTests',
    trace_source: 'from',
    relation_type: 'mentions',
  },
];

/** Sets the demo tenant's trace model: the roles between the topics it has (all of them with the V-model). */
export async function seedTraceModel(
  services: Services,
  owner: Principal,
  topics: Record<TopicKey, DemoTopic>,
): Promise<void> {
  const roles: TraceRole[] = ROLES.filter((role) => topics[role.from] && topics[role.to]).map((role) => ({
    ...role,
    from: { topic_history_id: topics[role.from]!.historyId },
    to: { topic_history_id: topics[role.to]!.historyId },
  }));
  await services.tracer.model.replace(owner, {
    version: 0,
    roles,
    change_reason: 'demo data: the V-model',
  });
}
