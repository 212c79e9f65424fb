import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { FormSchema, RelationType } from '@rxs/contract';
import type { Services } from '../services/index.js';
import type { Principal } from '../auth/principal.js';
import type { Storage } from '../storage/database.js';
import { changeActor } from '../storage/change-actor.js';
import { nowIso } from '../storage/ids.js';
import { insertRecords } from '../storage/records-write.js';
import { appendRevisionVersion } from '../storage/revisions-write.js';
import { storedContext } from '../services/records/repository.js';
import sampleTopic from './samples/kt_system_requirements.json' with { type: 'json' };
import sampleRecords from './samples/records_system_requirements.json' with { type: 'json' };
import { riskRegisterSchema, verificationTests, verificationTestsSchema } from './topics.js';
import { seedVModel } from './v-model.js';
import { seedTraceModel } from './trace-model.js';
import type { DemoInfo } from './demo-info.js';

/** Sample timestamps carry no zone; they are UTC. */
const utc = (timestamp: string) =>
  new Date(/[zZ]|[+-]\d\d:?\d\d$/.test(timestamp) ? timestamp : `${timestamp}Z`).toISOString();

/**
 * Seeds the demo once: a tenant built from the reference samples (System Requirements, re-approved
 * once, and Verification Tests linked to it; with `vModel`, the rest of a V-model around them) and a
 * second tenant with its own topic. Later starts
 * read the same facts back from demo.json (API keys are shown once, so they live only there).
 */
export async function seedDemo(
  services: Services,
  options: {
    dataDir: string;
    baseUrl: string;
    /** Also the rest of the V-model (demo/v-model.ts): what `rxs serve --demo` shows. */
    vModel?: boolean;
  },
): Promise<DemoInfo> {
  const file = join(options.dataDir, 'demo.json');
  if (existsSync(file)) {
    const info = JSON.parse(readFileSync(file, 'utf8')) as DemoInfo;
    const stillThere = await services.storage.db
      .selectFrom('tenants')
      .select('id')
      .where('id', '=', info.tenant.id)
      .executeTakeFirst();
    if (stillThere) {
      writeKeyFile(options.dataDir, info.tenant.users.owner.apiKey);
      return {
        ...info,
        techdocUrl: options.baseUrl,
        recordsUrl: options.baseUrl,
        tracerUrl: options.baseUrl,
      };
    }
  }
  const { accounts, techdoc, records, tracer, storage } = services;
  // demo.json is written last, so a seed killed midway leaves tenants nobody can reach: start over.
  await discardUnfinishedDemo(storage);

  const tenant = await accounts.createTenant('Demo Medical Devices');
  const users = {} as DemoInfo['tenant']['users'];
  for (const role of ['owner', 'editor', 'viewer'] as const) {
    const password = `demo-${role}-${randomBytes(6).toString('base64url')}`;
    const user = await accounts.createUser(tenant.id, {
      email: `${role}@demo.rxs.local`,
      name: `Demo ${role}`,
      role,
      password,
    });
    const key = await accounts.createApiKey(tenant.id, { userId: user.id, name: `demo ${role} key` });
    users[role] = { email: user.email, role, password, apiKey: key.key };
  }
  const owner: Principal = {
    tenantId: tenant.id,
    userId: (await accounts.findUserByEmail(users.owner.email))!.id,
    role: 'owner',
    via: 'local',
  };

  // System Requirements: the sample revision (its real ids) and records, then re-approved once.
  const created = nowIso();
  await storage.db.transaction().execute(async (trx) => {
    await trx
      .insertInto('kt_histories')
      .values({
        id: sampleTopic.knowledge_topic_history_id,
        tenant_id: tenant.id,
        latest_revision_id: sampleTopic._id,
        current_revision_id: sampleTopic._id,
      })
      .execute();
    await trx
      .insertInto('kt_revisions')
      .values({
        id: sampleTopic._id,
        tenant_id: tenant.id,
        history_id: sampleTopic.knowledge_topic_history_id,
        name: sampleTopic.knowledge_topic_name,
        type: sampleTopic.type,
        version: '1.0',
        status: 'approved',
        schema: JSON.stringify(sampleTopic.knowledge_topic_schema),
        data: '{}',
        product_history_id: tenant.product_history_id,
        product_version: sampleTopic.product_version,
        knowledge_unit_history_id: tenant.knowledge_unit_history_id,
        knowledge_unit_version: sampleTopic.knowledge_unit_version,
        source_schema_id: null,
        created_by: owner.userId,
        created_at: utc(sampleTopic.audit_info.timestamp_created),
        updated_by: null,
        updated_at: null,
        last_action: 'created',
        approved_by: owner.userId,
        approved_at: created,
      })
      .execute();
    // History as the service would have written it: the revision's version, then the records'.
    await appendRevisionVersion(
      trx,
      tenant.id,
      sampleTopic._id,
      'approved',
      changeActor(owner, null, created),
    );
    await insertRecords(
      trx,
      sampleRecords.map((record) => ({
        id: record._id,
        tenant_id: tenant.id,
        kt_revision_id: sampleTopic._id,
        name: record.name,
        form: JSON.stringify(record.form),
        version: record.version,
        data: JSON.stringify(record.data),
        read_only: record.read_only ? 1 : 0,
        context: storedContext(record.context),
        created_by: owner.userId,
        created_at: utc(record.audit_info.timestamp_created),
        updated_by: null,
        updated_at: null,
        last_action: 'created',
      })),
      changeActor(owner, 'demo data: the published sample records', created),
    );
  });
  const draft = await techdoc.openDraft(owner, sampleTopic._id);
  const schema = draft.knowledge_topic_schema as FormSchema;
  await techdoc.update(owner, draft._id, {
    knowledge_topic_schema: {
      ...schema,
      components: [
        ...schema.components,
        {
          label: 'Verification method',
          type: 'select',
          id: 'Field_vm01',
          key: 'select_vm8x2p',
          properties: { 'service-key': 'verification_method' },
          values: ['Test', 'Inspection', 'Analysis', 'Review'].map((m) => ({
            label: m,
            value: m.toLowerCase(),
          })),
        },
      ],
    },
  });
  const requirements = await techdoc.approve(owner, draft._id);

  const testsDraft = await techdoc.create(owner, {
    knowledge_topic_name: 'Verification Tests',
    type: 'multi_record',
    knowledge_topic_schema: verificationTestsSchema,
  });
  const tests = await techdoc.approve(owner, testsDraft._id);
  const testRecords = [];
  for (const test of verificationTests) {
    testRecords.push(
      await records.create(owner, {
        name: test.name,
        form: {},
        data: test.data,
        context: { knowledge_unit_topic_id: tests._id },
      }),
    );
  }

  const requirementIds = sampleRecords.map((r) => r._id);
  const link = async (source: string, target: string, relation_type: RelationType) =>
    (
      await tracer.create(owner, {
        source: { node_id: source, node_type: 'Record' },
        target: { node_id: target, node_type: 'Record' },
        relation_type,
      })
    )._id;
  const traceIds = [
    await link(testRecords[0]!._id, requirementIds[0]!, 'is_related'),
    await link(testRecords[1]!._id, requirementIds[1]!, 'is_related'),
    await link(testRecords[2]!._id, requirementIds[2]!, 'is_related'),
    await link(requirementIds[1]!, requirementIds[0]!, 'has_parent'),
  ];
  const vModel = options.vModel
    ? await seedVModel(services, owner, {
        ...Object.fromEntries(sampleRecords.map((r) => [r.data.name.slice(0, 7), r._id])),
        ...Object.fromEntries(testRecords.map((r) => [r.name, r._id])),
      })
    : undefined;
  if (vModel) traceIds.push(...vModel.traceIds);

  // A second tenant: the isolation tests' counterpart.
  const other = await accounts.createTenant('Other Manufacturer');
  const otherOwnerPassword = `demo-other-${randomBytes(6).toString('base64url')}`;
  const otherOwnerUser = await accounts.createUser(other.id, {
    email: 'owner@other.rxs.local',
    name: 'Other owner',
    role: 'owner',
    password: otherOwnerPassword,
  });
  const otherKey = await accounts.createApiKey(other.id, {
    userId: otherOwnerUser.id,
    name: 'other owner key',
  });
  const otherPrincipal: Principal = { tenantId: other.id, userId: otherOwnerUser.id, role: 'owner' };
  const risks = await techdoc.approve(
    otherPrincipal,
    (
      await techdoc.create(otherPrincipal, {
        knowledge_topic_name: 'Risk Register',
        type: 'multi_record',
        knowledge_topic_schema: riskRegisterSchema,
      })
    )._id,
  );
  const riskRecords = [
    await records.create(otherPrincipal, {
      name: 'RISK-1',
      form: {},
      data: { hazard: 'Burns from hot chamber surfaces', select_sev: '3' },
      context: { knowledge_unit_topic_id: risks._id },
    }),
    await records.create(otherPrincipal, {
      name: 'RISK-2',
      form: {},
      data: { hazard: 'Incomplete sterilization', select_sev: '5' },
      context: { knowledge_unit_topic_id: risks._id },
    }),
  ];
  await tracer.create(otherPrincipal, {
    source: { node_id: riskRecords[0]!._id, node_type: 'Record' },
    target: { node_id: riskRecords[1]!._id, node_type: 'Record' },
    relation_type: 'is_related',
  });

  const info: DemoInfo = {
    techdocUrl: options.baseUrl,
    recordsUrl: options.baseUrl,
    tracerUrl: options.baseUrl,
    tenant: {
      id: tenant.id,
      name: tenant.name,
      topics: {
        systemRequirements: {
          name: requirements.knowledge_topic_name,
          historyId: requirements.knowledge_topic_history_id,
          currentRevisionId: requirements._id,
          oldRevisionIds: [sampleTopic._id],
          recordIds: requirementIds,
        },
        verificationTests: {
          name: tests.knowledge_topic_name,
          historyId: tests.knowledge_topic_history_id,
          currentRevisionId: tests._id,
          oldRevisionIds: [],
          recordIds: testRecords.map((r) => r._id),
        },
        ...vModel?.topics,
      },
      users,
    },
    otherTenant: {
      id: other.id,
      name: other.name,
      topics: {
        riskRegister: {
          name: risks.knowledge_topic_name,
          historyId: risks.knowledge_topic_history_id,
          currentRevisionId: risks._id,
          oldRevisionIds: [],
          recordIds: riskRecords.map((r) => r._id),
        },
      },
      users: {
        owner: {
          email: otherOwnerUser.email,
          role: 'owner',
          password: otherOwnerPassword,
          apiKey: otherKey.key,
        },
      },
    },
    traceIds,
  };
  await seedTraceModel(services, owner, info.tenant.topics);
  mkdirSync(options.dataDir, { recursive: true });
  writeFileSync(`${file}.tmp`, `${JSON.stringify(info, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
  writeKeyFile(options.dataDir, users.owner.apiKey);
  return info;
}

/** The e-mails the demo signs in with; they identify the tenants of an earlier, unfinished seed. */
const DEMO_EMAILS = ['owner', 'editor', 'viewer']
  .map((role) => `${role}@demo.rxs.local`)
  .concat('owner@other.rxs.local');

/** Removes the data, users and keys of the tenants an unfinished seed created, in one transaction. */
async function discardUnfinishedDemo(storage: Storage): Promise<void> {
  const leftovers = await storage.db
    .selectFrom('users')
    .select('tenant_id')
    .distinct()
    .where('email', 'in', DEMO_EMAILS)
    .execute();
  const tenantIds = leftovers.map((row) => row.tenant_id);
  if (tenantIds.length === 0) return;
  await storage.db.transaction().execute(async (trx) => {
    // Children before parents: the foreign keys are checked at each statement.
    for (const table of [
      'sessions',
      'traceability_views',
      'record_outline_entries',
      'record_outlines',
      'trace_roles',
      'traces',
      'records',
      'api_keys',
      'kt_revisions',
      'kt_histories',
      'users',
    ] as const)
      await trx.deleteFrom(table).where('tenant_id', 'in', tenantIds).execute();
    // The audit log and the history are append-only and keep what the seed did: a tenant with such
    // rows stays, empty and unreachable (no users, no keys).
    const appendOnly = [
      'audit_events',
      'record_versions',
      'trace_events',
      'kt_revision_versions',
      'trace_model_versions',
    ] as const;
    await trx
      .deleteFrom('tenants')
      .where('id', 'in', tenantIds)
      .where(({ and, not, exists, selectFrom }) =>
        and(
          appendOnly.map((table) =>
            not(
              exists(selectFrom(table).select('tenant_id').whereRef(`${table}.tenant_id`, '=', 'tenants.id')),
            ),
          ),
        ),
      )
      .execute();
  });
}

/** The owner's key alone in a file, for `rxs export --api-key-file` (keys do not belong on command lines). */
export const DEMO_KEY_FILE = 'demo-owner.key';
function writeKeyFile(dataDir: string, key: string): void {
  const file = join(dataDir, DEMO_KEY_FILE);
  writeFileSync(`${file}.tmp`, `${key}\n`, { mode: 0o600 });
  renameSync(`${file}.tmp`, file);
}
