import type { RecordCreate, RecordUpdate, ServiceRecord, FormSchema } from '@rxs/sdk';
import { nextRecordVersion } from '@rxs/sdk';
import type { Principal } from '../../auth/principal.js';
import { conflict, notFound, unprocessable, validationItem } from '../../http/errors.js';
import type { Storage } from '../../storage/database.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import { inTransaction } from '../../storage/transactions.js';
import { jsonValue } from '../../storage/json.js';
import type { TechdocService } from '../techdoc/service.js';
import { recordJson, storedContext, toServiceRecord, type RecordRow } from './repository.js';
import { validateRecordData } from './validation/index.js';

export interface RecordFilter {
  revisionIds?: string[];
  ids?: string[];
  startDate?: string;
  endDate?: string;
  includeUpdated?: boolean;
  after?: string;
  limit?: number;
}

/** Records: listing (streamed), single-record CRUD with validation against the topic's form schema. */
export class RecordsService {
  constructor(
    private readonly storage: Storage,
    private readonly techdoc: TechdocService,
  ) {}

  private get db() {
    return this.storage.db;
  }

  private listQuery(tenantId: string, filter: RecordFilter) {
    let query = this.db.selectFrom('records').selectAll().where('tenant_id', '=', tenantId).orderBy('id');
    if (filter.revisionIds) query = query.where('kt_revision_id', 'in', filter.revisionIds);
    if (filter.ids) query = query.where('id', 'in', filter.ids);
    if (filter.after) query = query.where('id', '>', filter.after);
    const { startDate, endDate, includeUpdated } = filter;
    if (startDate || endDate) {
      query = query.where((eb) => {
        const within = (column: 'created_at' | 'updated_at') =>
          eb.and([
            ...(startDate ? [eb(column, '>=', startDate)] : []),
            ...(endDate ? [eb(column, '<=', endDate)] : []),
          ]);
        return includeUpdated ? eb.or([within('created_at'), within('updated_at')]) : within('created_at');
      });
    }
    if (filter.limit !== undefined) query = query.limit(filter.limit);
    return query;
  }

  /** Every matching record as a JSON line, read from a database cursor. */
  async *streamJsonLines(principal: Principal, filter: RecordFilter): AsyncGenerator<string> {
    if (filter.revisionIds?.length === 0 || filter.ids?.length === 0) return;
    for await (const row of this.storage.stream<RecordRow>(
      this.listQuery(principal.tenantId, filter).compile(),
    )) {
      yield recordJson(row);
    }
  }

  /** One page of records (`limit` set): the JSON lines and the last id when more remain. */
  async page(
    principal: Principal,
    filter: RecordFilter & { limit: number },
  ): Promise<{ lines: string[]; next?: string }> {
    if (filter.revisionIds?.length === 0 || filter.ids?.length === 0) return { lines: [] };
    const rows = await this.listQuery(principal.tenantId, { ...filter, limit: filter.limit + 1 }).execute();
    const page = rows.slice(0, filter.limit);
    return {
      lines: page.map(recordJson),
      next: rows.length > filter.limit ? page[page.length - 1]!.id : undefined,
    };
  }

  async get(principal: Principal, id: string): Promise<ServiceRecord> {
    return toServiceRecord(await this.load(principal.tenantId, id));
  }

  private async load(tenantId: string, id: string): Promise<RecordRow> {
    const row = await this.db
      .selectFrom('records')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(`Record ${id} was not found.`);
    return row;
  }

  async create(principal: Principal, input: RecordCreate): Promise<ServiceRecord> {
    const revisionId = input.context.knowledge_unit_topic_id;
    if (!revisionId) {
      throw unprocessable([
        validationItem(
          ['body', 'context', 'knowledge_unit_topic_id'],
          'Field required: the KT revision id the record belongs to',
          'missing',
        ),
      ]);
    }
    const { revision } = await this.techdoc.loadRevision(principal.tenantId, revisionId);
    const data = input.data ?? {};
    const problems = validateRecordData(jsonValue<FormSchema>(revision.schema), data);
    if (problems.length > 0) throw unprocessable(problems);

    let name = input.name.trim();
    if (input.auto_number) {
      const { count } = await this.db
        .selectFrom('records')
        .select((eb) => eb.fn.countAll<number>().as('count'))
        .where('tenant_id', '=', principal.tenantId)
        .where('kt_revision_id', '=', revisionId)
        .executeTakeFirstOrThrow();
      name = `${name}-${Number(count) + 1}`;
    }
    const row: RecordRow = {
      id: newObjectId(),
      tenant_id: principal.tenantId,
      kt_revision_id: revisionId,
      name,
      form: JSON.stringify(input.form),
      version: '1.0',
      data: JSON.stringify(data),
      read_only: input.read_only ? 1 : 0,
      context: storedContext(input.context),
      created_by: principal.userId,
      created_at: nowIso(),
      updated_by: null,
      updated_at: null,
      last_action: 'created',
    };
    await this.db
      .insertInto('records')
      .values(row as never)
      .execute();
    return toServiceRecord(row);
  }

  async update(principal: Principal, id: string, input: RecordUpdate): Promise<ServiceRecord> {
    const row = await this.load(principal.tenantId, id);
    if (row.read_only) throw conflict(`Record ${id} is read-only and refuses changes.`);
    if (input.version !== undefined && input.version !== row.version) {
      throw conflict(
        `Record ${id} is at version ${row.version}, not ${input.version}: someone changed it meanwhile. Reload it and apply your change again.`,
      );
    }
    if (input.data !== undefined && row.kt_revision_id) {
      const { revision } = await this.techdoc.loadRevision(principal.tenantId, row.kt_revision_id);
      const problems = validateRecordData(jsonValue<FormSchema>(revision.schema), input.data);
      if (problems.length > 0) throw unprocessable(problems);
    }
    const changes = {
      name: input.name?.trim() ?? row.name,
      data: input.data !== undefined ? JSON.stringify(input.data) : row.data,
      version: nextRecordVersion(row.version),
      updated_by: principal.userId,
      updated_at: nowIso(),
      last_action: 'updated',
    };
    // The version in the WHERE clause makes concurrent updates fail loudly instead of overwriting.
    const result = await this.db
      .updateTable('records')
      .set(changes as never)
      .where('id', '=', id)
      .where('tenant_id', '=', principal.tenantId)
      .where('version', '=', row.version)
      .executeTakeFirst();
    if (result.numUpdatedRows === 0n)
      throw conflict(`Record ${id} changed meanwhile. Reload it and apply your change again.`);
    return toServiceRecord({ ...row, ...changes });
  }

  /** Deletes a record and the traces that touch it, so no export links to a record that is gone. */
  async delete(principal: Principal, id: string): Promise<void> {
    const row = await this.load(principal.tenantId, id);
    if (row.read_only) throw conflict(`Record ${id} is read-only and cannot be deleted.`);
    await inTransaction(this.db, async (trx) => {
      await trx
        .deleteFrom('records')
        .where('id', '=', id)
        .where('tenant_id', '=', principal.tenantId)
        .execute();
      await trx
        .deleteFrom('traces')
        .where('tenant_id', '=', principal.tenantId)
        .where((eb) => eb.or([eb('source_id', '=', id), eb('target_id', '=', id)]))
        .execute();
    });
  }
}
