import type { ExportedTrace, TraceEnd } from '../model.js';
import { ROLE_LINKS_PREFIX } from '../../import/source-row.js';
import { RECORD_NODE_TYPE, type TraceRoles } from './traces.js';

/** After a link in a links cell: a record at either end changed since it was reviewed. */
export const SUSPECT_MARK = ' [suspect]';

/**
 * The other end of a link as a links cell names it: "READABLE_ID (recordId)" for a record of this
 * export (the readable id for people, the `_id` for round trips), "recordId" for a record outside
 * it and "Type/id" for any other node, followed by " [suspect]" for a suspect link.
 */
export function linkEndText(end: TraceEnd, suspect: boolean): string {
  const mark = suspect ? SUSPECT_MARK : '';
  if (end.type !== RECORD_NODE_TYPE) return `${end.type}/${end.id}${mark}`;
  return end.readableId === undefined ? `${end.id}${mark}` : `${end.readableId} (${end.id})${mark}`;
}

/**
 * The link columns of a table named by the trace model's roles: one per name the roles of the
 * traces read with ("verifies", "verified by"; roles that share a name share its column), in the
 * model's order, after the `links` column, headed "links: verifies" (an import skips such columns as
 * it skips `links`). A record's cell under a role's forward name lists the
 * records it is linked to from the role's `from` end, under its backward name those it is linked
 * to from the `to` end, each as `linkEndText`, separated by "; ".
 */
export class RoleColumns {
  readonly headers: string[] = [];
  private readonly cells = new Map<string, string[][]>();

  constructor(roles: TraceRoles, traces: readonly ExportedTrace[], taken: ReadonlySet<string>) {
    const columnOf = new Map<string, number>();
    const used = new Set(taken);
    for (const role of roles.all)
      for (const name of [role.forward_name, role.backward_name]) {
        if (columnOf.has(name)) continue;
        columnOf.set(name, this.headers.length);
        let header = `${ROLE_LINKS_PREFIX}${name}`;
        for (let n = 2; used.has(header); n++) header = `${ROLE_LINKS_PREFIX}${name} (${n})`;
        used.add(header);
        this.headers.push(header);
      }
    for (const trace of traces) {
      const link = roles.of(trace);
      if (!link) continue;
      this.add(link.from.id, columnOf.get(link.role.forward_name)!, linkEndText(link.to, trace.suspect));
      this.add(link.to.id, columnOf.get(link.role.backward_name)!, linkEndText(link.from, trace.suspect));
    }
  }

  /** A record's cells, one per header ("" where it has no link of that name). */
  of(recordId: string): string[] {
    const lists = this.cells.get(recordId);
    return this.headers.map((_, column) => lists?.[column]?.join('; ') ?? '');
  }

  private add(recordId: string, column: number, text: string): void {
    let lists = this.cells.get(recordId);
    if (!lists) this.cells.set(recordId, (lists = []));
    const list = (lists[column] ??= []);
    if (!list.includes(text)) list.push(text);
  }
}
