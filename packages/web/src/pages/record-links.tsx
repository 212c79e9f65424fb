import { useState } from 'preact/hooks';
import type { LinkView, RecordSearchHit, RelationType } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import { ReviewLinkDialog } from '../components/review-link-dialog';
import {
  Badge,
  ConfirmDialog,
  EmptyState,
  ErrorNotice,
  Field,
  Link,
  Loading,
  Notice,
} from '../components/ui';
import { useAsync, useDebounced } from '../hooks';
import { recordLabel } from '../record-label';
import { paths } from '../router';
import { useCan, useSession } from '../session';

export const relationLabel = (relation: string) => relation.replace(/_/g, ' ');

type Direction = 'outgoing' | 'incoming';

/** A hit's title without the readable id it starts with ("REQ_001 — Pump" after REQ_001: "Pump"). */
function titleAfterId({ title, readableId }: RecordSearchHit): string {
  if (!title) return '';
  if (!readableId || !title.startsWith(readableId)) return title;
  return title.slice(readableId.length).replace(/^[\s:–—-]+/, '');
}

/** A record's traces: linked records with relation types; add by search, remove with confirmation. */
export function LinksPanel({ recordId }: { recordId: string }) {
  const can = useCan();
  const links = useAsync(() => api.get<LinkView[]>(`/records/${recordId}/links`), [recordId]);
  const [adding, setAdding] = useState(false);
  const [removing, setRemoving] = useState<LinkView>();
  const [reviewing, setReviewing] = useState<LinkView>();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  const remove = async () => {
    if (!removing) return;
    setBusy(true);
    try {
      await api.delete(`/traces/${removing.traceId}`);
      setRemoving(undefined);
      links.reload();
    } catch (failure) {
      setError(errorMessage(failure));
      setRemoving(undefined);
    } finally {
      setBusy(false);
    }
  };

  const suspectCount = (links.data ?? []).filter((l) => l.suspect).length;

  return (
    <section class="panel" aria-labelledby="links-title" data-testid="links-panel">
      <div class="panel-head">
        <h2 id="links-title" class="panel-title">
          Linked records
        </h2>
        {can('traces:write') && !adding && (
          <button type="button" class="button button-small" onClick={() => setAdding(true)}>
            Add link
          </button>
        )}
      </div>
      {error && (
        <Notice kind="error" onDismiss={() => setError(undefined)}>
          {error}
        </Notice>
      )}
      {adding && (
        <AddLink
          recordId={recordId}
          linked={new Set((links.data ?? []).map((l) => l.node.id))}
          onDone={(changed) => {
            setAdding(false);
            if (changed) links.reload();
          }}
        />
      )}
      {suspectCount > 0 && (
        <Notice kind="warning">
          {suspectCount === 1 ? '1 link is suspect' : `${suspectCount} links are suspect`}: a record at either
          end changed since the link was made or last reviewed. Check that it still holds, then review it.
        </Notice>
      )}
      {links.error !== undefined && <ErrorNotice error={links.error} onRetry={links.reload} />}
      {!links.data && links.loading && <Loading label="Loading links…" />}
      {links.data && links.data.length === 0 && (
        <EmptyState title="No links yet">
          {can('traces:write')
            ? 'Link this record to requirements, tests or risks it relates to.'
            : 'Records linked to this one by traces appear here.'}
        </EmptyState>
      )}
      {links.data && links.data.length > 0 && (
        <div class="table-wrap">
          <table class="table table-compact" data-testid="links-table">
            <thead>
              <tr>
                <th scope="col">Relation</th>
                <th scope="col">Record</th>
                <th scope="col">Topic</th>
                {can('traces:write') && (
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                )}
              </tr>
            </thead>
            <tbody>
              {links.data.map((link) => (
                <tr key={link.traceId}>
                  <td>
                    <span class="relation">
                      {link.direction === 'outgoing' ? (
                        <>
                          this record <strong>{relationLabel(link.relationType)}</strong> →
                        </>
                      ) : (
                        <>
                          ← <strong>{relationLabel(link.relationType)}</strong> this record
                        </>
                      )}
                    </span>
                    {link.suspect && (
                      <>
                        {' '}
                        <Badge kind="warning">Suspect</Badge>
                      </>
                    )}
                  </td>
                  <td>
                    {link.node.deleted ? (
                      <span class="muted">Deleted record {link.node.id}</span>
                    ) : link.node.historyId ? (
                      <Link href={paths.record(link.node.historyId, link.node.id)}>{link.node.name}</Link>
                    ) : (
                      <span>
                        {link.node.name ?? link.node.id} <span class="muted">({link.node.type})</span>
                      </span>
                    )}
                  </td>
                  <td>{link.node.topicName ?? <span class="muted">—</span>}</td>
                  {can('traces:write') && (
                    <td class="actions">
                      {link.suspect && (
                        <button
                          type="button"
                          class="button button-small"
                          aria-label={`Review the link to ${link.node.name ?? link.node.id}`}
                          onClick={() => setReviewing(link)}
                        >
                          Review
                        </button>
                      )}
                      <button
                        type="button"
                        class="button button-small button-ghost"
                        aria-label={`Remove the link to ${link.node.name ?? link.node.id}`}
                        onClick={() => setRemoving(link)}
                      >
                        Remove
                      </button>
                    </td>
                  )}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <ReviewLinkDialog
        traceId={reviewing?.traceId}
        onClose={() => setReviewing(undefined)}
        onReviewed={links.reload}
        onFailed={setError}
      >
        <p>
          A record changed since the trace “{relationLabel(reviewing?.relationType ?? '')}” to{' '}
          {reviewing?.node.name ?? reviewing?.node.id} was made or last reviewed. If the link still holds for
          both records as they are now, confirm: it is no longer suspect.
        </p>
      </ReviewLinkDialog>
      <ConfirmDialog
        open={removing !== undefined}
        title="Remove this link?"
        confirmLabel="Remove link"
        busy={busy}
        onCancel={() => setRemoving(undefined)}
        onConfirm={() => void remove()}
      >
        <p>
          The trace “{relationLabel(removing?.relationType ?? '')}” to{' '}
          {removing?.node.name ?? removing?.node.id} is deleted. Both records stay.
        </p>
      </ConfirmDialog>
    </section>
  );
}

function AddLink({
  recordId,
  linked,
  onDone,
}: {
  recordId: string;
  linked: Set<string>;
  onDone: (changed: boolean) => void;
}) {
  const { meta } = useSession();
  const [relation, setRelation] = useState<RelationType>('is_related');
  const [direction, setDirection] = useState<Direction>('outgoing');
  const [search, setSearch] = useState('');
  const [error, setError] = useState<string>();
  const [busyId, setBusyId] = useState<string>();
  const [added, setAdded] = useState(0);
  const q = useDebounced(search.trim(), 200);
  const hits = useAsync(
    () => (q ? api.get<RecordSearchHit[]>('/records/search', { q, limit: 20 }) : Promise.resolve([])),
    [q],
  );
  const candidates = (hits.data ?? []).filter((hit) => hit.id !== recordId);

  const link = async (hit: RecordSearchHit) => {
    setBusyId(hit.id);
    setError(undefined);
    const self = { node_id: recordId, node_type: 'Record' };
    const other = { node_id: hit.id, node_type: 'Record' };
    try {
      await api.post('/traces', {
        source: direction === 'outgoing' ? self : other,
        target: direction === 'outgoing' ? other : self,
        relation_type: relation,
      });
      setAdded((n) => n + 1);
      onDone(true);
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusyId(undefined);
    }
  };

  return (
    <div class="add-link" role="group" aria-labelledby="add-link-title">
      <h3 id="add-link-title" class="add-link-title">
        Add a link
      </h3>
      <div class="add-link-grid">
        <Field label="Direction" id="link-direction">
          <select
            id="link-direction"
            value={direction}
            onChange={(e) => setDirection(e.currentTarget.value as Direction)}
          >
            <option value="outgoing">This record → the other</option>
            <option value="incoming">The other → this record</option>
          </select>
        </Field>
        <Field label="Relation" id="link-relation">
          <select
            id="link-relation"
            value={relation}
            onChange={(e) => setRelation(e.currentTarget.value as RelationType)}
          >
            {meta.relationTypes.map((type) => (
              <option key={type} value={type}>
                {relationLabel(type)}
              </option>
            ))}
          </select>
        </Field>
        <Field label="Find a record" id="link-search" hint="Part of its name, or its id">
          <input
            id="link-search"
            type="search"
            autoFocus
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </Field>
      </div>
      {error && <Notice kind="error">{error}</Notice>}
      {q && hits.loading && <Loading label="Searching…" />}
      {q && hits.data && candidates.length === 0 && <p class="muted">No record matches “{q}”.</p>}
      {candidates.length > 0 && (
        <ul class="hit-list" aria-label="Matching records">
          {candidates.map((hit) => (
            <li key={hit.id}>
              <div>
                <strong>{recordLabel(hit)}</strong> {titleAfterId(hit)}
                <div class="cell-sub">
                  {recordLabel(hit) !== hit.name && <>Record {hit.name} · </>}
                  {hit.topicName ?? 'No topic'} · <code>{hit.id}</code>
                  {linked.has(hit.id) && ' · already linked'}
                </div>
              </div>
              <button
                type="button"
                class="button button-small"
                disabled={busyId !== undefined}
                aria-label={`Link ${hit.name}${recordLabel(hit) !== hit.name ? ` (${recordLabel(hit)})` : ''}`}
                onClick={() => void link(hit)}
              >
                {busyId === hit.id ? 'Linking…' : 'Link'}
              </button>
            </li>
          ))}
        </ul>
      )}
      <div class="button-row">
        <button type="button" class="button button-ghost" onClick={() => onDone(added > 0)}>
          Close
        </button>
      </div>
    </div>
  );
}
