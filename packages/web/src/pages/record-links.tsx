import { useState } from 'preact/hooks';
import type { LinkView, RecordSearchHit, RelationType, TraceRole } from '@rxs/web-api';
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
import {
  isInternalRelation,
  linkWording,
  relationLabel,
  roleChoices,
  traceOfChoice,
  traceOfRelation,
  type RecordTrace,
} from '../link-roles';
import { recordLabel, titleAfterId } from '../record-label';
import { paths } from '../router';
import { useCan, useSession } from '../session';
import { getTraceModel } from '../trace-model-api';

type Direction = 'outgoing' | 'incoming';

/** The choice of the link dialog that offers the raw relation types instead of a role. */
const OTHER_RELATIONS = 'other';

/** The other record of a link, as a sentence names it: its one id, then its title. */
const nodeLabel = (node: LinkView['node']) =>
  node.name === null ? node.id : recordLabel({ name: node.name, readableId: node.readableId });

/** "verified by TC-004", "REQ-1 is related to this record": a link named from this record's side. */
function linkSentence(roles: readonly TraceRole[], thisTopic: string | null, link: LinkView) {
  const wording = linkWording(roles, {
    direction: link.direction,
    relationType: link.relationType,
    thisTopic,
    otherTopic: link.node.historyId,
  });
  const title = titleAfterId(link.node);
  return { ...wording, label: nodeLabel(link.node), title };
}

/**
 * A record's traces, each named by its role in the tenant's trace model from this record's side
 * ("verified by TC-004 — Drop test"), else by its relation type; add by role or relation type,
 * remove with confirmation. `topicHistoryId` is the record's topic, the roles' ends are topics.
 */
export function LinksPanel({
  recordId,
  topicHistoryId,
}: {
  recordId: string;
  topicHistoryId: string | null;
}) {
  const can = useCan();
  const links = useAsync(() => api.get<LinkView[]>(`/records/${recordId}/links`), [recordId]);
  // Without a model (none yet, or it failed to load) links are named by their relation types.
  const model = useAsync(() => getTraceModel(), []);
  const roles = model.data?.roles ?? [];
  const sentence = (link: LinkView) => linkSentence(roles, topicHistoryId, link);
  const plainSentence = (link: LinkView | undefined) => {
    if (!link) return '';
    const { before, label, title, after } = sentence(link);
    return [before, label, title && `— ${title}`].filter(Boolean).join(' ') + after;
  };
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
          roles={roles}
          topicHistoryId={topicHistoryId}
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
                <th scope="col">Link</th>
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
                    <LinkCell link={link} wording={sentence(link)} />
                    {link.suspect && (
                      <>
                        {' '}
                        <Badge kind="warning">Suspect</Badge>
                      </>
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
          A record changed since the link “{plainSentence(reviewing)}” was made or last reviewed. If the link
          still holds for both records as they are now, confirm: it is no longer suspect.
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
        <p>The link “{plainSentence(removing)}” is deleted. Both records stay.</p>
      </ConfirmDialog>
    </section>
  );
}

/** One link as a sentence: the role or relation, the other record (a link to its page) and its title. */
function LinkCell({ link, wording }: { link: LinkView; wording: ReturnType<typeof linkSentence> }) {
  const { before, label, title, after } = wording;
  const record = link.node.deleted ? (
    <span class="muted">deleted record {link.node.id}</span>
  ) : link.node.historyId ? (
    <Link href={paths.record(link.node.historyId, link.node.id)}>{label}</Link>
  ) : (
    <span>
      {label} <span class="muted">({link.node.type})</span>
    </span>
  );
  return (
    <>
      <span>
        {before && <strong>{before}</strong>} {record}
        {title && <> — {title}</>}
        {after && <strong>{after}</strong>}
      </span>
      {link.node.name !== null && label !== link.node.name && (
        <div class="cell-sub">Record {link.node.name}</div>
      )}
    </>
  );
}

function AddLink({
  recordId,
  roles,
  topicHistoryId,
  linked,
  onDone,
}: {
  recordId: string;
  roles: readonly TraceRole[];
  topicHistoryId: string | null;
  linked: Set<string>;
  onDone: (changed: boolean) => void;
}) {
  const { meta } = useSession();
  const choices = roleChoices(roles, topicHistoryId);
  // The first role until one is picked: the model may arrive after the dialog opened.
  const [picked, setChoiceKey] = useState<string>();
  const choiceKey = picked ?? choices[0]?.key ?? OTHER_RELATIONS;
  const choice = choices.find((c) => c.key === choiceKey);
  const [relation, setRelation] = useState<RelationType>('is_related');
  const [direction, setDirection] = useState<Direction>('outgoing');
  const [showInternal, setShowInternal] = useState(false);
  const [search, setSearch] = useState('');
  const [error, setError] = useState<string>();
  const [busyId, setBusyId] = useState<string>();
  const [added, setAdded] = useState(0);
  const q = useDebounced(search.trim(), 200);
  // A role links to records of its other topic only: the search asks for that topic's records.
  const topic = choice?.otherTopic.historyId;
  const hits = useAsync(
    () =>
      q
        ? api.get<RecordSearchHit[]>('/records/search', { q, limit: 50, ...(topic && { topic }) })
        : Promise.resolve([]),
    [q, topic],
  );
  const candidates = (hits.data ?? []).filter(
    (hit) => hit.id !== recordId && (!topic || hit.historyId === topic),
  );
  const relationTypes = meta.relationTypes.filter(
    (type) => showInternal || !isInternalRelation(type) || type === relation,
  );

  const link = async (hit: RecordSearchHit) => {
    setBusyId(hit.id);
    setError(undefined);
    const trace: RecordTrace = choice
      ? traceOfChoice(choice, recordId, hit.id)
      : traceOfRelation(relation, direction, recordId, hit.id);
    try {
      await api.post('/traces', trace);
      setAdded((n) => n + 1);
      onDone(true);
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusyId(undefined);
    }
  };

  const otherTopicName = choice && (choice.otherTopic.name ?? 'its topic');
  return (
    <div class="add-link" role="group" aria-labelledby="add-link-title">
      <h3 id="add-link-title" class="add-link-title">
        Add a link
      </h3>
      <div class="add-link-grid">
        {choices.length > 0 && (
          <Field
            label="This record…"
            id="link-role"
            hint={choice ? `Links to a record of ${otherTopicName}` : undefined}
          >
            <select id="link-role" value={choiceKey} onChange={(e) => setChoiceKey(e.currentTarget.value)}>
              {choices.map((c) => (
                <option key={c.key} value={c.key}>
                  {c.name} ({c.otherTopic.name ?? 'a record'})
                </option>
              ))}
              <option value={OTHER_RELATIONS}>Other relation types…</option>
            </select>
          </Field>
        )}
        {!choice && (
          <>
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
                {relationTypes.map((type) => (
                  <option key={type} value={type}>
                    {relationLabel(type)}
                  </option>
                ))}
              </select>
            </Field>
          </>
        )}
        <Field
          label="Find a record"
          id="link-search"
          hint={
            choice
              ? `Part of its name, or its id; records of ${otherTopicName}`
              : 'Part of its name, or its id'
          }
        >
          <input
            id="link-search"
            type="search"
            autoFocus
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </Field>
      </div>
      {!choice && (
        <label class="checkbox">
          <input
            type="checkbox"
            checked={showInternal}
            onChange={(e) => setShowInternal(e.currentTarget.checked)}
          />
          Show internal types (those the system makes itself, such as references in the text editor)
        </label>
      )}
      {error && <Notice kind="error">{error}</Notice>}
      {q && hits.loading && <Loading label="Searching…" />}
      {q && hits.data && candidates.length === 0 && (
        <p class="muted">
          No record {choice ? `of ${otherTopicName} ` : ''}matches “{q}”.
        </p>
      )}
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
