/**
 * The IDENTIFIER of the SPEC-RELATION-TYPE an rxs export gives the links of a trace model role,
 * and what an import reads back from it. The type's LONG-NAME is the role's forward name, and its
 * relations run from the record at the role's `from` end (SOURCE) to the one at its `to` end
 * (TARGET), so that "SOURCE <forward name> TARGET" reads right; the IDENTIFIER keeps what the names
 * do not say: the contract relation type of the traces, and which end of the relation is the
 * trace's source. Derived from the role alone, it is the same in every export of the model.
 *
 *   RT-<relation type>.<role id>.<from|to>   e.g. RT-is_related.verifies.from
 *
 * (`from`: the trace runs SOURCE -> TARGET; `to`: TARGET -> SOURCE). Relation types and role ids
 * hold no `.`, so the parts never run into each other.
 */

/** What of a role its relation type's IDENTIFIER is made of (trace-model.ts `TraceRole`). */
export interface RoleRelationTypeShape {
  id: string;
  relation_type: string;
  trace_source: 'from' | 'to';
}

const ROLE_RELATION_TYPE_ID = /^RT-([a-z_]+)\.([a-z][a-z0-9_-]*)\.(from|to)$/;

/** The IDENTIFIER of the SPEC-RELATION-TYPE of a role's links. */
export function roleRelationTypeId(role: RoleRelationTypeShape): string {
  return `RT-${role.relation_type}.${role.id}.${role.trace_source}`;
}

/**
 * The relation type a role's SPEC-RELATION-TYPE IDENTIFIER names, and whether its relations run
 * against the traces (TARGET is the trace's source); undefined for any other IDENTIFIER.
 */
export function roleRelationTypeOf(
  identifier: string,
): { relationType: string; roleId: string; reversed: boolean } | undefined {
  const match = ROLE_RELATION_TYPE_ID.exec(identifier);
  if (!match) return undefined;
  return { relationType: match[1]!, roleId: match[2]!, reversed: match[3] === 'to' };
}
