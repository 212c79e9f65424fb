import type { Baseline, BaselineCreate } from '@rxs/contract';
import type { Selectable } from 'kysely';
import type { Principal } from '../../auth/principal.js';
import { conflict, notFound, unprocessable, validationItem } from '../../http/errors.js';
import { isUniqueViolation } from '../../storage/constraints.js';
import type { Storage } from '../../storage/database.js';
import { newObjectId, nowIso } from '../../storage/ids.js';
import { jsonValue } from '../../storage/json.js';
import type { BaselineTable } from '../../storage/schema.js';
import { parseAsOf } from './as-of.js';

type BaselineRow = Selectable<BaselineTable>;

function toBaseline(row: BaselineRow): Baseline {
  return {
    _id: row.id,
    name: row.name,
    description: row.description,
    at: row.at,
    knowledge_topic_revision_ids: jsonValue<string[]>(row.revision_ids),
    created_by: row.created_by,
    created_at: row.created_at,
  };
}

/**
 * Baselines: a named, immutable moment over some KT revisions. Exporting a baseline is exporting
 * its revisions as of its moment (`as_of`), so it needs no copy of the data: history holds it.
 */
export class BaselinesService {
  constructor(private readonly storage: Storage) {}

  private get db() {
    return this.storage.db;
  }

  async create(principal: Principal, input: BaselineCreate): Promise<Baseline> {
    const name = input.name.trim();
    if (!name) {
      throw unprocessable([
        validationItem(['body', 'name'], 'The baseline needs a name, e.g. v1.0.', 'string_too_short'),
      ]);
    }
    const createdAt = nowIso();
    const at =
      input.at === undefined
        ? createdAt
        : await parseAsOf(this.storage, principal.tenantId, input.at, ['body', 'at']);
    const revisionIds = [...new Set(input.knowledge_topic_revision_ids)];
    // Every revision must have existed at that moment, or the baseline would name nothing.
    const existing = await this.db
      .selectFrom('kt_revision_versions')
      .select('revision_id')
      .distinct()
      .where('tenant_id', '=', principal.tenantId)
      .where('revision_id', 'in', revisionIds)
      .where('at', '<=', at)
      .execute();
    const known = new Set(existing.map((row) => row.revision_id));
    const missing = revisionIds.filter((id) => !known.has(id));
    if (missing.length > 0) {
      throw unprocessable(
        missing.map((id) =>
          validationItem(
            ['body', 'knowledge_topic_revision_ids', input.knowledge_topic_revision_ids.indexOf(id)],
            `${id} is not a KT revision of your tenant that existed at ${at}. Use revision ids (not history ids) from GET /kt/.`,
            'unknown_revision',
          ),
        ),
      );
    }
    const row: BaselineRow = {
      id: newObjectId(),
      tenant_id: principal.tenantId,
      name,
      description: input.description?.trim() ?? '',
      at,
      revision_ids: JSON.stringify(revisionIds),
      created_by: principal.userId,
      created_at: createdAt,
    };
    try {
      await this.db
        .insertInto('baselines')
        .values(row as never)
        .execute();
    } catch (error) {
      if (isUniqueViolation(error)) throw this.nameTaken(name);
      throw error;
    }
    return toBaseline(row);
  }

  private nameTaken(name: string) {
    return conflict(
      `A baseline named "${name}" already exists; baselines never change. Choose another name (e.g. "${name}-2").`,
    );
  }

  async list(
    principal: Principal,
    page: { limit: number; after?: string; name?: string },
  ): Promise<{ items: Baseline[]; next?: string }> {
    let query = this.db
      .selectFrom('baselines')
      .selectAll()
      .where('tenant_id', '=', principal.tenantId)
      .orderBy('id')
      .limit(page.limit + 1);
    if (page.after) query = query.where('id', '>', page.after);
    if (page.name !== undefined) query = query.where('name', '=', page.name);
    const rows = await query.execute();
    const items = rows.slice(0, page.limit).map(toBaseline);
    return { items, next: rows.length > page.limit ? items[items.length - 1]!._id : undefined };
  }

  async get(principal: Principal, id: string): Promise<Baseline> {
    const row = await this.db
      .selectFrom('baselines')
      .selectAll()
      .where('tenant_id', '=', principal.tenantId)
      .where('id', '=', id)
      .executeTakeFirst();
    if (!row) throw notFound(`Baseline ${id} was not found. List your baselines with GET /baselines/.`);
    return toBaseline(row);
  }

  async findByName(principal: Principal, name: string): Promise<Baseline> {
    const row = await this.db
      .selectFrom('baselines')
      .selectAll()
      .where('tenant_id', '=', principal.tenantId)
      .where('name', '=', name)
      .executeTakeFirst();
    if (!row) throw notFound(`No baseline is named "${name}". List your baselines with GET /baselines/.`);
    return toBaseline(row);
  }
}
