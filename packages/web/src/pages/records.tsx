import type { ComponentChildren } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import type { FieldColumn, RecordRow, RecordTable } from '@rxs/web-api';
import { api } from '../api';
import {
  isHidden,
  loadLayout,
  saveLayout,
  withVisibility,
  withWidth,
  type ColumnLayout,
} from '../column-layout';
import { ColumnsMenu, ResizeHandle } from '../components/column-controls';
import { DateTime, EmptyState, ErrorNotice, Link, Loading, Notice, PageHeader } from '../components/ui';
import { useAsync, useDebounced, useTitle, useTopic } from '../hooks';
import { recordLabel } from '../record-label';
import { navigate, paths, topicCrumbs, useLocation } from '../router';
import { useCan } from '../session';

type Dir = 'asc' | 'desc';
const PAGE_SIZES = [25, 50, 100, 200];

/** A width the user set, held by the header and the cells alike; none: the automatic width. */
const widthStyle = (width: number | undefined) =>
  width === undefined ? undefined : { width: `${width}px`, minWidth: `${width}px`, maxWidth: `${width}px` };

function SortHeader({
  label,
  sortKey,
  sort,
  dir,
  onSort,
  width,
  children,
}: {
  label: string;
  sortKey: string;
  sort: string;
  dir: Dir;
  onSort: (key: string) => void;
  /** A width the user set (CSS pixels); the column's automatic width when undefined. */
  width?: number;
  /** What follows the sort button in the header (a resize handle). */
  children?: ComponentChildren;
}) {
  const active = sort === sortKey;
  const style =
    width === undefined ? undefined : { width: `${width}px`, minWidth: `${width}px`, maxWidth: `${width}px` };
  return (
    <th
      scope="col"
      aria-sort={active ? (dir === 'asc' ? 'ascending' : 'descending') : 'none'}
      class={children ? 'resizable' : undefined}
      style={widthStyle(width)}
    >
      <button type="button" class="sort-button" onClick={() => onSort(sortKey)}>
        <span>{label}</span>
        <span class="sort-mark" aria-hidden="true">
          {active ? (dir === 'asc' ? '▲' : '▼') : '↕'}
        </span>
      </button>
      {children}
    </th>
  );
}

const DEFAULT_PAGE_SIZE = 50;
/** Records as people number them (REQ-9 before REQ-10), by readable id, else name. */
const DEFAULT_SORT = 'readable-id';

/**
 * A column's room from the longest text of the page: wide for sentences (a title, a description),
 * the least its header needs when every cell is empty, else what its values need. Text then gets
 * the room that unused columns would take, and two lines show a sentence, not three words of it.
 */
function columnClass(column: FieldColumn, rows: RecordRow[]): string | undefined {
  const longest = Math.max(0, ...rows.map((row) => (row.values[column.name] ?? '').length));
  if (longest === 0) return 'col-empty';
  if (longest > 60) return 'col-long-text';
  if (longest > 24) return 'col-text';
  return undefined;
}

/** A whole number from the address within [min, max], else `fallback`. */
function wholeOf(text: string | null, fallback: number, min: number, max: number): number {
  const n = Number(text);
  return text !== null && Number.isInteger(n) && n >= min && n <= max ? n : fallback;
}

/** Column filters from the address (`{"semantic name": "text"}`), ignoring anything else. */
function filtersOf(text: string | null): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(text ?? '{}');
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(
      Object.entries(parsed).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
    );
  } catch {
    return {};
  }
}

export function RecordsPage({ historyId }: { historyId: string }) {
  const location = useLocation();
  // Set by a record page after a deletion: confirmed here (only an id is taken from the address).
  const deleted = /^[0-9a-f]{24}$/.exec(location.query.get('deleted') ?? '')?.[0];
  const can = useCan();
  const topic = useTopic(historyId);
  useTitle(topic.data ? `Records of ${topic.data.name}` : 'Records');
  // The table's state lives in the address: kept on Back and reload, and a view can be shared.
  const initial = location.query;
  const [sort, setSort] = useState(() => initial.get('sort') ?? DEFAULT_SORT);
  const [dir, setDir] = useState<Dir>(() => (initial.get('dir') === 'desc' ? 'desc' : 'asc'));
  const [search, setSearch] = useState(() => initial.get('q') ?? '');
  const [filters, setFilters] = useState<Record<string, string>>(() => filtersOf(initial.get('filters')));
  const [showFilters, setShowFilters] = useState(() => initial.has('filters'));
  const [offset, setOffset] = useState(() => wholeOf(initial.get('offset'), 0, 0, 10_000_000));
  const [limit, setLimit] = useState(() => wholeOf(initial.get('limit'), DEFAULT_PAGE_SIZE, 1, 500));
  const q = useDebounced(search.trim(), 250);
  const filterText = useDebounced(JSON.stringify(filters), 250);
  useEffect(() => {
    const params = new URLSearchParams();
    if (sort !== DEFAULT_SORT) params.set('sort', sort);
    if (dir !== 'asc') params.set('dir', dir);
    if (q) params.set('q', q);
    if (filterText !== '{}') params.set('filters', filterText);
    if (offset > 0) params.set('offset', String(offset));
    if (limit !== DEFAULT_PAGE_SIZE) params.set('limit', String(limit));
    // A deletion's confirmation stays until dismissed.
    const current = new URLSearchParams(window.location.search);
    for (const kept of ['deleted', 'name']) if (current.has(kept)) params.set(kept, current.get(kept)!);
    const text = params.toString();
    navigate(`${paths.records(historyId)}${text ? `?${text}` : ''}`, { replace: true });
  }, [historyId, sort, dir, q, filterText, offset, limit]);
  const revisionId = topic.data?.currentRevisionId ?? null;
  const [layout, setLayoutState] = useState<ColumnLayout>(() => loadLayout(historyId));
  const setLayout = useCallback(
    (change: (current: ColumnLayout) => ColumnLayout) =>
      setLayoutState((current) => {
        const next = change(current);
        saveLayout(historyId, next);
        return next;
      }),
    [historyId],
  );
  const resizeTo = useCallback(
    (name: string) => (width: number | null) => setLayout((current) => withWidth(current, name, width)),
    [setLayout],
  );

  const table = useAsync(
    () =>
      revisionId
        ? api.get<RecordTable>(`/revisions/${revisionId}/records`, {
            offset,
            limit,
            sort,
            dir,
            q,
            filters: filterText === '{}' ? undefined : filterText,
          })
        : Promise.resolve(null),
    [revisionId, offset, limit, sort, dir, q, filterText],
  );

  const onSort = (key: string) => {
    setOffset(0);
    if (sort === key) setDir(dir === 'asc' ? 'desc' : 'asc');
    else {
      setSort(key);
      setDir('asc');
    }
  };
  const setFilter = (column: FieldColumn, text: string) => {
    setOffset(0);
    setFilters((current) => {
      const next = { ...current };
      if (text) next[column.name] = text;
      else delete next[column.name];
      return next;
    });
  };

  if (topic.error !== undefined) return <ErrorNotice error={topic.error} onRetry={topic.reload} />;
  if (!topic.data) return <Loading />;
  const t = topic.data;
  const crumbs = topicCrumbs(t.historyId, t.name);
  const data = table.data;
  const filtered = q !== '' || filterText !== '{}';
  const columnClasses: Record<string, string | undefined> = Object.fromEntries(
    (data?.columns ?? []).map((column) => [column.name, columnClass(column, data?.rows ?? [])]),
  );
  const emptyColumns = new Set(data?.emptyColumns ?? []);
  const columnChoices = (data?.columns ?? []).map((column) => ({
    name: column.name,
    empty: emptyColumns.has(column.name),
    visible: !isHidden(layout, column.name, emptyColumns.has(column.name)),
  }));
  const visibleColumns = (data?.columns ?? []).filter(
    (column) => !isHidden(layout, column.name, emptyColumns.has(column.name)),
  );

  return (
    <>
      <PageHeader
        title={`Records of ${t.name}`}
        crumbs={crumbs}
        actions={
          <>
            {revisionId && (
              <Link class="button" href={paths.exports([revisionId])}>
                Export
              </Link>
            )}
            {revisionId && can('records:write') && (
              <Link class="button" href={paths.importRecords(t.historyId)}>
                Import
              </Link>
            )}
            {revisionId && can('records:write') && (
              <Link class="button button-primary" href={paths.newRecord(t.historyId)}>
                New record
              </Link>
            )}
          </>
        }
      >
        {revisionId && (
          <p class="page-lead">
            Revision <code>{revisionId}</code> (v{t.revision.version}). Columns are the fields' semantic
            names, as in exports.
          </p>
        )}
      </PageHeader>
      {deleted && (
        <Notice
          kind="success"
          title={`Record “${location.query.get('name') ?? deleted}” deleted`}
          onDismiss={() => {
            const params = new URLSearchParams(window.location.search);
            params.delete('deleted');
            params.delete('name');
            const text = params.toString();
            navigate(`${paths.records(t.historyId)}${text ? `?${text}` : ''}`, { replace: true });
          }}
        >
          The traces that linked it are deleted too. Its history stays readable{' '}
          <Link href={paths.record(t.historyId, deleted)}>at its address</Link>, where an editor can restore
          it.
        </Notice>
      )}

      {!revisionId ? (
        <Notice kind="info" title="This topic is not approved yet">
          Records are created with the form of an approved revision.{' '}
          <Link href={paths.topic(t.historyId)}>Open the topic</Link> to approve its draft.
        </Notice>
      ) : (
        <>
          <div class="toolbar">
            <label class="search">
              <span class="visually-hidden">Search records</span>
              <input
                type="search"
                placeholder="Search name, id or any value"
                value={search}
                onInput={(e) => {
                  setSearch(e.currentTarget.value);
                  setOffset(0);
                }}
              />
            </label>
            <button
              type="button"
              class="button"
              aria-expanded={showFilters}
              aria-controls="records-table"
              onClick={() => setShowFilters(!showFilters)}
            >
              {showFilters ? 'Hide column filters' : 'Filter columns'}
            </button>
            {data && data.columns.length > 0 && (
              <ColumnsMenu
                columns={columnChoices}
                onToggle={(name, visible) => setLayout((current) => withVisibility(current, name, visible))}
                onReset={() => setLayout(() => ({ hidden: [], shown: [], widths: {} }))}
              />
            )}
            {filtered && (
              <button
                type="button"
                class="button button-ghost"
                onClick={() => {
                  setSearch('');
                  setFilters({});
                  setOffset(0);
                }}
              >
                Clear filters
              </button>
            )}
            {table.loading && <span class="spinner" role="status" aria-label="Loading records" />}
          </div>
          {table.error !== undefined && <ErrorNotice error={table.error} onRetry={table.reload} />}
          {!data && table.loading && <Loading label="Loading records…" />}
          {data && data.unfilteredTotal === 0 && (
            <EmptyState
              title="No records yet"
              action={
                can('records:write') && (
                  <Link class="button button-primary" href={paths.newRecord(t.historyId)}>
                    Create the first record
                  </Link>
                )
              }
            >
              Records of this topic are listed here, one column per field.
            </EmptyState>
          )}
          {data && data.unfilteredTotal > 0 && (
            <>
              <div class="table-wrap table-wrap-records" aria-busy={table.loading}>
                <table class="table table-records" id="records-table">
                  <thead>
                    <tr>
                      <SortHeader
                        label="Record"
                        sortKey={DEFAULT_SORT}
                        sort={sort}
                        dir={dir}
                        onSort={onSort}
                      />
                      {visibleColumns.map((column) => (
                        <SortHeader
                          key={column.key}
                          label={column.name}
                          sortKey={`field:${column.name}`}
                          sort={sort}
                          dir={dir}
                          onSort={onSort}
                          width={layout.widths[column.name]}
                        >
                          <ResizeHandle
                            label={column.name}
                            width={layout.widths[column.name]}
                            onWidth={resizeTo(column.name)}
                          />
                        </SortHeader>
                      ))}
                      <SortHeader
                        label="Last change"
                        sortKey="updated"
                        sort={sort}
                        dir={dir}
                        onSort={onSort}
                      />
                    </tr>
                    {showFilters && (
                      <tr class="filter-row">
                        <td />
                        {visibleColumns.map((column) => (
                          <td key={column.key}>
                            <input
                              type="search"
                              aria-label={`Filter ${column.name}`}
                              placeholder="Filter"
                              value={filters[column.name] ?? ''}
                              onInput={(e) => setFilter(column, e.currentTarget.value)}
                            />
                          </td>
                        ))}
                        <td />
                      </tr>
                    )}
                  </thead>
                  <tbody>
                    {data.rows.map((row) => (
                      <tr key={row.id}>
                        <th scope="row">
                          <Link
                            href={paths.record(t.historyId, row.id)}
                            class="strong-link"
                            title={recordLabel(row) !== row.name ? `Record name: ${row.name}` : undefined}
                          >
                            {recordLabel(row)}
                          </Link>
                          {row.problems > 0 && (
                            <>
                              {' '}
                              <span
                                class="badge badge-warning"
                                title={`${row.problems === 1 ? '1 problem' : `${row.problems} problems`} against the current form: fix the record before it can be saved`}
                              >
                                Does not validate
                              </span>
                            </>
                          )}
                        </th>
                        {visibleColumns.map((column) => {
                          const text = row.values[column.name] ?? '';
                          return (
                            <td
                              key={column.key}
                              class={columnClasses[column.name]}
                              style={widthStyle(layout.widths[column.name])}
                              title={text.length > 40 ? text : undefined}
                            >
                              <span class="cell-clip">{text}</span>
                            </td>
                          );
                        })}
                        <td>
                          <DateTime value={row.updatedAt ?? row.createdAt} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </div>
              {data.total === 0 && (
                <EmptyState title="No record matches the filters">
                  Change the search or the column filters, or clear them.
                </EmptyState>
              )}
              <Pager
                offset={offset}
                limit={limit}
                total={data.total}
                unfilteredTotal={data.unfilteredTotal}
                onOffset={setOffset}
                onLimit={(size) => {
                  setLimit(size);
                  setOffset(0);
                }}
              />
            </>
          )}
        </>
      )}
    </>
  );
}

function Pager({
  offset,
  limit,
  total,
  unfilteredTotal,
  onOffset,
  onLimit,
}: {
  offset: number;
  limit: number;
  total: number;
  unfilteredTotal: number;
  onOffset: (offset: number) => void;
  onLimit: (limit: number) => void;
}) {
  const first = total === 0 ? 0 : offset + 1;
  const last = Math.min(offset + limit, total);
  const lastPage = Math.max(0, Math.floor((total - 1) / limit) * limit);
  return (
    <nav class="pager" aria-label="Pages of records">
      <span role="status" data-testid="pager-status">
        {first.toLocaleString('en')}–{last.toLocaleString('en')} of {total.toLocaleString('en')}
        {total !== unfilteredTotal && ` (filtered from ${unfilteredTotal.toLocaleString('en')})`}
      </span>
      <div class="pager-buttons">
        <button
          type="button"
          class="button button-small"
          disabled={offset === 0}
          onClick={() => onOffset(0)}
          aria-label="First page"
        >
          First
        </button>
        <button
          type="button"
          class="button button-small"
          disabled={offset === 0}
          onClick={() => onOffset(Math.max(0, offset - limit))}
          aria-label="Previous page"
        >
          Previous
        </button>
        <button
          type="button"
          class="button button-small"
          disabled={offset + limit >= total}
          onClick={() => onOffset(offset + limit)}
          aria-label="Next page"
        >
          Next
        </button>
        <button
          type="button"
          class="button button-small"
          disabled={offset + limit >= total}
          onClick={() => onOffset(lastPage)}
          aria-label="Last page"
        >
          Last
        </button>
        <label class="page-size">
          <span>Per page</span>
          <select value={limit} onChange={(e) => onLimit(Number(e.currentTarget.value))}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </label>
      </div>
    </nav>
  );
}
