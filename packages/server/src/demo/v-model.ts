import type { FormSchema, RelationType } from '@rxs/contract';
import type { Services } from '../services/index.js';
import type { Principal } from '../auth/principal.js';
import type { DemoTopic } from './demo-info.js';

/**
 * The rest of the demo's V-model of a steam sterilizer (the device of the published sample
 * requirements): user needs, design outputs, validation studies, risk controls and release records
 * around the System Requirements and Verification Tests, with traces along the V and a few
 * deliberate gaps, so that exports, sync and traceability have something true to show:
 * - UN-5 (door safety) has no system requirement; REQ_004 (footprint) has no verification test;
 * - UN-6 (cycle records) is not validated; DO-6 (log export) implements no requirement.
 */

/** A topic's form: its id (required, by pattern), title, description, and topic-specific fields. */
function schema(idLabel: string, idPattern: string, extra: FormSchema['components'] = []): FormSchema {
  return {
    components: [
      {
        type: 'textfield',
        key: 'item_id',
        label: idLabel,
        properties: { 'service-key': 'item_id' },
        validate: { required: true, pattern: idPattern },
      },
      { type: 'textfield', key: 'title', label: 'Title', validate: { required: true } },
      { type: 'textarea', key: 'description', label: 'Description' },
      ...extra,
    ],
  };
}

const statusField = (values: string[]) => ({
  type: 'select',
  key: 'status',
  label: 'Status',
  values: values.map((v) => ({ label: v, value: v.toLowerCase().replace(/\s+/g, '_') })),
});

interface Item {
  id: string;
  title: string;
  description: string;
  extra?: Record<string, unknown>;
}

const TOPICS: { key: string; name: string; schema: FormSchema; items: Item[] }[] = [
  {
    key: 'userNeeds',
    name: 'User Needs',
    schema: schema('Need ID', '^UN-[0-9]+$', [statusField(['Draft', 'Approved'])]),
    items: [
      {
        id: 'UN-1',
        title: 'Sterile instruments after every cycle',
        description:
          'Instruments taken out at the end of a completed cycle are sterile (SAL 10⁻⁶) without further handling.',
      },
      {
        id: 'UN-2',
        title: 'A cycle fits between two procedures',
        description:
          'A standard load is sterilized and dry within the hour between two scheduled procedures.',
      },
      {
        id: 'UN-3',
        title: 'Cycle state at a glance',
        description: 'The operator sees from 2 m whether a cycle runs, has ended or needs attention.',
      },
      {
        id: 'UN-4',
        title: 'Fits on a standard countertop',
        description:
          'The device fits on a 60 cm deep countertop in a reprocessing room, with room to open the door.',
      },
      {
        id: 'UN-5',
        title: 'The door cannot hurt the operator',
        description: 'The door cannot be opened while the chamber is under pressure or hot enough to scald.',
      },
      {
        id: 'UN-6',
        title: 'Cycle records for the quality file',
        description:
          'Each cycle leaves a record (date, program, temperatures, pressures, result) the quality manager can file.',
      },
    ].map((item) => ({ ...item, extra: { status: 'approved' } })),
  },
  {
    key: 'designOutputs',
    name: 'Design Outputs',
    schema: schema('Output ID', '^DO-[0-9]+$', [
      { type: 'textfield', key: 'document', label: 'Document and revision' },
    ]),
    items: [
      {
        id: 'DO-1',
        title: 'Heater control firmware',
        description:
          'PID control of the chamber heater to a setpoint of 121 °C; plateau held for 15 min within ±2 °C.',
        extra: { document: 'FW-HC-012 rev. D' },
      },
      {
        id: 'DO-2',
        title: 'Pressure vessel drawing',
        description: 'Chamber and door of the pressure vessel, 2.2 bar design pressure, 23 l.',
        extra: { document: 'DWG-PV-200 rev. C' },
      },
      {
        id: 'DO-3',
        title: 'Door interlock specification',
        description: 'Solenoid lock released only below 0.2 bar and 80 °C; fails locked.',
        extra: { document: 'SPEC-DI-031 rev. B' },
      },
      {
        id: 'DO-4',
        title: 'Status screen specification',
        description: 'Colour and symbol per state (running, done, fault), readable at 2 m; texts in English.',
        extra: { document: 'SPEC-HMI-007 rev. A' },
      },
      {
        id: 'DO-5',
        title: 'Enclosure drawing',
        description: 'Outer enclosure 480 × 380 × 330 mm, door swing 300 mm.',
        extra: { document: 'DWG-EN-110 rev. E' },
      },
      {
        id: 'DO-6',
        title: 'Cycle log export format',
        description: 'CSV file per cycle on USB: program, start, plateau temperatures and pressures, result.',
        extra: { document: 'SPEC-LOG-002 rev. A' },
      },
    ],
  },
  {
    key: 'validationStudies',
    name: 'Validation Studies',
    schema: schema('Study ID', '^VAL-[0-9]+$', [statusField(['Planned', 'Passed', 'Failed'])]),
    items: [
      {
        id: 'VAL-1',
        title: 'Biological indicator study',
        description:
          'Three half-cycles with Geobacillus stearothermophilus indicators in the coldest spot of a full load; no growth after 7 days.',
        extra: { status: 'passed' },
      },
      {
        id: 'VAL-2',
        title: 'Simulated use in a reprocessing room',
        description:
          'Fifteen sterile processing technicians run a day of loads between scheduled procedures; cycle times logged.',
        extra: { status: 'passed' },
      },
      {
        id: 'VAL-3',
        title: 'Summative usability evaluation',
        description:
          'IEC 62366-1 summative evaluation with 15 users: status recognition from 2 m, placement on a countertop.',
        extra: { status: 'planned' },
      },
    ],
  },
  {
    key: 'riskControls',
    name: 'Risk Controls',
    schema: schema('Control ID', '^RC-[0-9]+$', [{ type: 'textfield', key: 'hazard', label: 'Hazard' }]),
    items: [
      {
        id: 'RC-1',
        title: 'Door interlock under pressure',
        description: 'The door stays locked above 0.2 bar or 80 °C (DO-3).',
        extra: { hazard: 'Scalding by steam when the door opens under pressure' },
      },
      {
        id: 'RC-2',
        title: 'Over-temperature cut-out',
        description: 'An independent thermal cut-out switches the heater off at 137 °C.',
        extra: { hazard: 'Damage to instruments and burns from an overheated chamber' },
      },
      {
        id: 'RC-3',
        title: 'Cycle abort on low water',
        description:
          'The cycle stops with an alarm when the reservoir runs low; the load is marked not sterile.',
        extra: { hazard: 'Non-sterile instruments released as sterile' },
      },
      {
        id: 'RC-4',
        title: 'Cycle result shown before unloading',
        description: 'The status screen shows a failed cycle in red with a symbol until acknowledged.',
        extra: { hazard: 'Non-sterile instruments released as sterile' },
      },
    ],
  },
  {
    key: 'releaseRecords',
    name: 'Release Records',
    schema: schema('Release', '^REL-[0-9.]+$', [
      { type: 'textfield', key: 'commit', label: 'Commit' },
      {
        type: 'select',
        key: 'gate',
        label: 'Gate result',
        values: ['passed', 'failed'].map((v) => ({ label: v, value: v })),
      },
      { type: 'textfield', key: 'evidence', label: 'Evidence link' },
    ]),
    items: [
      {
        id: 'REL-1.0.0',
        title: 'Release 1.0.0',
        description: 'First release to clinical evaluation sites.',
        extra: {
          commit: '3f9c2e1',
          gate: 'passed',
          evidence: 'https://ci.example.com/sterilizer/builds/412',
        },
      },
    ],
  },
];

/** Traces as [from, to, relation], by item id (REQ_00n and TC-00n are the existing topics' records). */
const LINKS: [string, string, RelationType][] = [
  ['UN-1', 'REQ_001', 'contributes_to'],
  ['UN-2', 'REQ_002', 'contributes_to'],
  ['UN-3', 'REQ_003', 'contributes_to'],
  ['UN-4', 'REQ_004', 'contributes_to'],
  ['REQ_001', 'DO-1', 'is_related'],
  ['REQ_001', 'DO-2', 'is_related'],
  ['REQ_002', 'DO-1', 'is_related'],
  ['REQ_003', 'DO-4', 'is_related'],
  ['REQ_004', 'DO-5', 'is_related'],
  ['VAL-1', 'UN-1', 'is_related'],
  ['VAL-2', 'UN-2', 'is_related'],
  ['VAL-3', 'UN-3', 'is_related'],
  ['VAL-3', 'UN-4', 'is_related'],
  ['RC-1', 'DO-3', 'is_related'],
  ['RC-1', 'UN-5', 'is_related'],
  ['RC-2', 'DO-1', 'is_related'],
  ['RC-3', 'REQ_001', 'is_related'],
  ['RC-4', 'DO-4', 'is_related'],
  ['REL-1.0.0', 'TC-001', 'mentions'],
  ['REL-1.0.0', 'TC-002', 'mentions'],
  ['REL-1.0.0', 'TC-003', 'mentions'],
];

/**
 * Seeds the V-model topics beside the demo's System Requirements and Verification Tests (`known`:
 * their records by readable id, e.g. REQ_001 and TC-001). Every record goes through the service, so
 * it is validated against its form; every trace through the tracer.
 */
export async function seedVModel(
  services: Services,
  owner: Principal,
  known: Record<string, string>,
): Promise<{ topics: Record<string, DemoTopic>; traceIds: string[] }> {
  const { techdoc, records, tracer } = services;
  const ids = { ...known };
  const topics: Record<string, DemoTopic> = {};
  for (const topic of TOPICS) {
    const draft = await techdoc.create(owner, {
      knowledge_topic_name: topic.name,
      type: 'multi_record',
      knowledge_topic_schema: topic.schema,
    });
    const revision = await techdoc.approve(owner, draft._id);
    const recordIds: string[] = [];
    for (const item of topic.items) {
      const record = await records.create(owner, {
        name: item.id,
        form: {},
        data: { item_id: item.id, title: item.title, description: item.description, ...item.extra },
        context: { knowledge_unit_topic_id: revision._id },
      });
      ids[item.id] = record._id;
      recordIds.push(record._id);
    }
    topics[topic.key] = {
      name: revision.knowledge_topic_name,
      historyId: revision.knowledge_topic_history_id,
      currentRevisionId: revision._id,
      oldRevisionIds: [],
      recordIds,
    };
  }
  const traceIds: string[] = [];
  for (const [from, to, relation_type] of LINKS) {
    const trace = await tracer.create(owner, {
      source: { node_id: ids[from]!, node_type: 'Record' },
      target: { node_id: ids[to]!, node_type: 'Record' },
      relation_type,
    });
    traceIds.push(trace._id);
  }
  return { topics, traceIds };
}
