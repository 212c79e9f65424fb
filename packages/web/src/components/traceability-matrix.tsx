import type { MatrixRecord, TraceabilityView, TraceRole } from '@rxs/web-api';
import { Link, plural } from './ui';
import { titleAfterId } from '../record-label';
import { paths } from '../router';

type Report = TraceabilityView['report'];
export type Rule = Report['rules'][number];

/** A matrix larger than this is listed as links (as the HTML report does). */
const MAX_MATRIX_CELLS = 40_000;
/** Empty cells offer "make a trace" up to this many cells: a button each is cheap only so far. */
const MAX_ACTIVE_CELLS = 5_000;

export const ruleName = (rule: Rule['rule']) =>
  `${rule.source.name} → ${rule.target.name}${rule.linkType ? ` (${rule.linkType})` : ''}`;

/** One record of a matrix: its readable id (as the report names it), and its id and title when known. */
export interface MatrixEnd {
  readableId: string;
  record: MatrixRecord | undefined;
  /** Its title without the readable id it may start with; '' when it has none. */
  title: string;
  /** Its topic's history id, for its page. */
  historyId: string;
}

/** A cell the user chose: a trace to open (`linked`) or to make (`empty`), between a row and a column. */
export interface MatrixCell {
  kind: 'linked' | 'suspect' | 'empty';
  rule: Rule;
  /** The trace-model role of the rule, when it has one: its backward name reads row → column. */
  role: TraceRole | undefined;
  row: MatrixEnd;
  column: MatrixEnd;
}

/** "SR-1 — Flow rate": a record's readable id and its title, as the matrix names it. */
export const endLabel = (end: MatrixEnd) => (end.title ? `${end.readableId} — ${end.title}` : end.readableId);

/** A record of the matrix as a link to its page (its readable id only when its id is not known). */
export function EndLink({ end }: { end: MatrixEnd }) {
  return end.record ? (
    <Link href={paths.record(end.historyId, end.record.id)}>{end.readableId}</Link>
  ) : (
    <>{end.readableId}</>
  );
}

/**
 * One rule's matrix to work in: source records (rows, with their titles) against target records
 * (columns), rows not covered and orphan columns marked; a covered cell opens its trace, an empty
 * one offers to make it under the rule's role (`onCell`), when `canMake` and the rule has a role.
 */
export function RuleMatrix({
  rule: r,
  role,
  records,
  onlyUncovered,
  canMake,
  onCell,
}: {
  rule: Rule;
  role: TraceRole | undefined;
  records: TraceabilityView['records'];
  onlyUncovered: boolean;
  canMake: boolean;
  onCell: (cell: MatrixCell) => void;
}) {
  const uncovered = new Set(r.uncovered);
  const orphans = new Set(r.orphans);
  const rows = [...new Set([...r.links.map(([s]) => s), ...r.uncovered])]
    .sort()
    .filter((row) => !onlyUncovered || uncovered.has(row));
  const columns = [...new Set([...r.links.map(([, t]) => t), ...r.orphans])].sort();
  const linked = new Set(r.links.map(([s, t]) => `${s}\u0000${t}`));
  const suspect = new Set(r.suspect.map(([s, t]) => `${s}\u0000${t}`));
  const title = ruleName(r.rule);
  const end = (topic: Rule['rule']['source'], readableId: string): MatrixEnd => {
    const record = records[topic.revisionId]?.[readableId];
    const title = titleAfterId({ title: record?.title ?? null, readableId });
    return { readableId, record, title, historyId: topic.historyId };
  };
  const verb = r.rule.linkType ?? 'linked to';
  const active = canMake && role !== undefined && rows.length * columns.length <= MAX_ACTIVE_CELLS;
  return (
    <section class="panel" aria-label={title} data-testid="rule-matrix">
      <h2 class="panel-title wrap">{title}</h2>
      {r.uncovered.length === 0 ? (
        <p>Every record of {r.rule.source.name} is linked.</p>
      ) : (
        <p>
          <strong>{plural(r.uncovered.length, 'record')} not linked</strong>: {r.uncovered.join(', ')}
        </p>
      )}
      {r.orphans.length > 0 && (
        <p>
          Orphans of {r.rule.target.name} ({r.orphans.length}): {r.orphans.join(', ')}
        </p>
      )}
      {active && (
        <p class="muted">
          Choose an empty cell to make a trace “{verb}” between its row and its column; a ticked cell shows
          its trace.
        </p>
      )}
      {rows.length === 0 ? (
        <p class="muted">No row to show.</p>
      ) : rows.length * columns.length > MAX_MATRIX_CELLS ? (
        <p class="muted">
          {rows.length} × {columns.length} is too large to draw; download the report for the list of links.
        </p>
      ) : (
        <div class="table-wrap">
          <table class="table table-compact trace-matrix">
            <thead>
              <tr>
                <th scope="col">
                  {r.rule.source.name} \ {r.rule.target.name}
                </th>
                <th scope="col">Title</th>
                {columns.map((c) => {
                  const column = end(r.rule.target, c);
                  const orphan = orphans.has(c);
                  return (
                    <th
                      scope="col"
                      key={c}
                      class={`matrix-column${orphan ? ' orphan' : ''}`}
                      title={endLabel(column) + (orphan ? ' (orphan: linked from none)' : '')}
                    >
                      <EndLink end={column} />
                      {column.title && (
                        <>
                          {' '}
                          <span class="matrix-column-title">{column.title}</span>
                        </>
                      )}
                      {orphan && <span class="matrix-mark"> (orphan)</span>}
                    </th>
                  );
                })}
              </tr>
            </thead>
            <tbody>
              {rows.map((rowId) => {
                const row = end(r.rule.source, rowId);
                const notLinked = uncovered.has(rowId);
                return (
                  <tr key={rowId} class={notLinked ? 'uncovered' : undefined}>
                    <th scope="row">
                      <EndLink end={row} />
                    </th>
                    <td class="matrix-title">
                      {row.title}
                      {notLinked && <span class="matrix-mark"> (not linked)</span>}
                    </td>
                    {columns.map((c) => {
                      const pair = `${rowId}\u0000${c}`;
                      const kind = suspect.has(pair) ? 'suspect' : linked.has(pair) ? 'linked' : 'empty';
                      const column = end(r.rule.target, c);
                      const open = () => onCell({ kind, rule: r, role, row, column });
                      if (kind !== 'empty')
                        return (
                          <td key={c} class={kind === 'suspect' ? 'suspect' : 'covered'}>
                            <button
                              type="button"
                              class="matrix-cell"
                              title={kind === 'suspect' ? 'Suspect link' : undefined}
                              aria-label={`${rowId} ${verb} ${c}${kind === 'suspect' ? ' (suspect)' : ''}: show the trace`}
                              onClick={open}
                            >
                              {kind === 'suspect' ? '⚠' : '✓'}
                            </button>
                          </td>
                        );
                      return (
                        <td key={c}>
                          {active && row.record && column.record && (
                            <button
                              type="button"
                              class="matrix-cell matrix-make"
                              aria-label={`Make a trace: ${rowId} ${verb} ${c}`}
                              onClick={open}
                            >
                              <span aria-hidden="true">+</span>
                            </button>
                          )}
                        </td>
                      );
                    })}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
