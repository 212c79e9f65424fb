import type { ServiceRecord } from '@rxs/contract';
import type { Principal } from '../auth/principal.js';
import type { RecordsService } from '../services/records/service.js';
import type { TechdocService } from '../services/techdoc/service.js';
import { unlessMissing } from './missing.js';
import { RecordIdentity } from './record-table.js';
import { RevisionMaps, semanticRecord } from './record-values.js';

/** A record's readable id and title as its topic's table shows them; null when it has none. */
export interface ReadableIdentity {
  readableId: string | null;
  title: string | null;
}

/** The same with the history id of the record's topic (null when its revision is not known). */
export interface RecordIdentityOf extends ReadableIdentity {
  historyId: string | null;
}

const NONE: ReadableIdentity = { readableId: null, title: null };

/**
 * The readable ids and titles of records seen in one answer (search hits, a record's links, a
 * document): each topic revision's form is read and mapped once per answer (`maps`, which may
 * read revisions as of a moment), so a list of many records of one topic costs one schema read.
 */
export class RecordIdentities {
  private readonly identities = new Map<string, RecordIdentity>();

  constructor(readonly maps: RevisionMaps) {}

  /** Identities of records as they are now, read by id; `of` them needs only their revision. */
  static now(techdoc: TechdocService, records: RecordsService, principal: Principal) {
    const identities = new RecordIdentities(new RevisionMaps(techdoc, principal));
    return {
      async of(recordId: string, revisionId: string | null): Promise<ReadableIdentity> {
        if (!(await identities.maps.get(revisionId))) return NONE;
        const record = await unlessMissing(records.get(principal, recordId));
        if (!record) return NONE;
        const { readableId, title } = await identities.ofRecord(record);
        return { readableId, title };
      },
    };
  }

  /** A record's identity by its own revision's form; its name as the title when the revision is unknown. */
  async ofRecord(record: ServiceRecord): Promise<RecordIdentityOf> {
    const mapped = await this.maps.get(record.context.knowledge_unit_topic_id);
    if (!mapped) return { readableId: null, title: record.name || null, historyId: null };
    const identity = this.identityOf(mapped.revision._id, mapped.map.fields);
    const { values } = semanticRecord(record, mapped.map);
    return {
      readableId: identity.readableId({ id: record._id, name: record.name, values }),
      title: identity.title(values),
      historyId: mapped.revision.knowledge_topic_history_id,
    };
  }

  /** The readable-id and title rules of a revision's form, made once per revision. */
  identityOf(revisionId: string, fields: ConstructorParameters<typeof RecordIdentity>[0]): RecordIdentity {
    let identity = this.identities.get(revisionId);
    if (!identity) this.identities.set(revisionId, (identity = new RecordIdentity(fields)));
    return identity;
  }
}
