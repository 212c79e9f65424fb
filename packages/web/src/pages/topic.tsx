import { useState } from 'preact/hooks';
import type { ApprovalResult, TopicDetail } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import { ApprovalImpactNotice } from '../components/approval-impact';
import { ApproveDialog, MEANING_LABELS, type ApprovalSignature } from '../components/approve-dialog';
import {
  Badge,
  CopyButton,
  DateTime,
  ErrorNotice,
  IdField,
  Link,
  Loading,
  Notice,
  PageHeader,
  plural,
} from '../components/ui';
import { useAsync, useTitle } from '../hooks';
import { navigate, paths, useLocation } from '../router';
import { useCan } from '../session';

/** What the page says after an approval, carried in the address so a reload still shows it. */
function approvalNotice(query: URLSearchParams) {
  const approved = query.get('approved');
  if (!approved) return undefined;
  return { approved, previous: query.get('from'), moved: Number(query.get('moved') ?? 0) };
}

export async function approveDraft(
  historyId: string,
  draftId: string,
  signature: ApprovalSignature,
): Promise<void> {
  const result = await api.post<ApprovalResult>(`/revisions/${draftId}/approve`, signature);
  const params = new URLSearchParams({ approved: result.revision._id, moved: String(result.recordsMoved) });
  if (result.previousRevisionId) params.set('from', result.previousRevisionId);
  navigate(`${paths.topic(historyId)}?${params.toString()}`, { force: true });
}

export async function openDraft(topic: TopicDetail): Promise<void> {
  if (!topic.draftRevisionId) await api.post(`/revisions/${topic.revision._id}/draft`);
  navigate(paths.design(topic.historyId));
}

export function TopicPage({ historyId }: { historyId: string }) {
  const can = useCan();
  const location = useLocation();
  const topic = useAsync(
    () => api.get<TopicDetail>(`/topics/${historyId}`),
    [historyId, location.query.get('approved')],
  );
  const [confirmApprove, setConfirmApprove] = useState(false);
  const [actionError, setActionError] = useState<string>();
  const notice = approvalNotice(location.query);
  useTitle(topic.data?.name ?? 'Knowledge topic');

  if (topic.error !== undefined) {
    return (
      <>
        <PageHeader title="Knowledge topic" crumbs={[{ href: paths.topics(), label: 'Topics' }]} />
        <ErrorNotice error={topic.error} onRetry={topic.reload} />
      </>
    );
  }
  if (!topic.data) return <Loading />;
  const t = topic.data;
  const draft = t.revisions.find((r) => r.id === t.draftRevisionId);
  const origin = window.location.origin;

  // Errors stay in the dialog (a wrong password is typed again there).
  const approve = async (signature: ApprovalSignature) => {
    if (!t.draftRevisionId) return;
    setActionError(undefined);
    await approveDraft(t.historyId, t.draftRevisionId, signature);
    setConfirmApprove(false);
  };

  return (
    <>
      <PageHeader
        title={t.name}
        crumbs={[{ href: paths.topics(), label: 'Topics' }]}
        actions={
          <>
            {t.currentRevisionId && (
              <Link class="button" href={paths.records(t.historyId)}>
                Records ({t.recordCount.toLocaleString('en')})
              </Link>
            )}
            {t.currentRevisionId && (
              <Link class="button" href={paths.exports([t.currentRevisionId])}>
                Export
              </Link>
            )}
            {t.currentRevisionId && (
              <Link class="button" href={paths.topicDocument(t.historyId)}>
                Document
              </Link>
            )}
            {t.currentRevisionId && (
              <Link class="button" href={paths.baselines(t.historyId)}>
                Baselines
              </Link>
            )}
            {can('kt:write') && (
              <button
                type="button"
                class="button"
                onClick={() => openDraft(t).catch((error: unknown) => setActionError(errorMessage(error)))}
              >
                {t.draftRevisionId ? 'Edit draft form' : 'Edit form'}
              </button>
            )}
            {can('kt:approve') && t.draftRevisionId && (
              <button type="button" class="button button-primary" onClick={() => setConfirmApprove(true)}>
                Approve draft
              </button>
            )}
          </>
        }
      >
        <div class="header-badges">
          <Badge>{t.type === 'single_record' ? 'Single record' : 'Multi record'}</Badge>
          {t.currentRevisionId ? (
            <Badge kind="success">Approved v{t.revision.version}</Badge>
          ) : (
            <Badge kind="warning">Not approved yet</Badge>
          )}
          {draft && t.currentRevisionId && <Badge kind="info">Draft v{draft.version} open</Badge>}
        </div>
      </PageHeader>

      {notice && (
        <Notice
          kind="success"
          title={notice.previous ? 'Re-approved: the topic has a new revision id' : 'Approved'}
          onDismiss={() => navigate(paths.topic(t.historyId), { replace: true })}
        >
          {notice.previous ? (
            <p data-testid="reapproval-notice">
              The current revision id is now <code>{notice.approved}</code> (was{' '}
              <code>{notice.previous}</code>). {plural(notice.moved, 'record')} moved to the new revision.
              Clients must fetch the revision id again before listing records: the old id now lists{' '}
              <code>[]</code>.
            </p>
          ) : (
            <p data-testid="reapproval-notice">
              Revision <code>{notice.approved}</code> is now current. Use it with the records API.
            </p>
          )}
        </Notice>
      )}
      {actionError && (
        <Notice kind="error" title="That did not work" onDismiss={() => setActionError(undefined)}>
          {actionError}
        </Notice>
      )}

      <section class="panel" aria-labelledby="ids-title">
        <h2 id="ids-title" class="panel-title">
          Identifiers
        </h2>
        <div class="id-grid">
          <IdField
            label="History id"
            id={t.historyId}
            testId="history-id"
            hint="Stable for the topic across all revisions; the web app and dashboards use it. The records API does not accept it."
          />
          {t.currentRevisionId ? (
            <IdField
              label="Current revision id"
              id={t.currentRevisionId}
              testId="current-revision-id"
              emphasis
              hint={
                <>
                  <strong>Use the revision id with the records API</strong> (
                  <code>GET /kt/&#123;id&#125;</code>,{' '}
                  <code>GET /records/?context__knowledge_unit_topic_id=&#123;id&#125;</code>). It changes when
                  the topic is re-approved.
                </>
              }
            />
          ) : (
            <div class="id-field id-field-missing" data-testid="current-revision-id">
              <div class="id-field-label">Current revision id</div>
              <p>
                None yet: the topic has no approved revision. Approve the draft to get the revision id for the
                records API.
              </p>
            </div>
          )}
        </div>
        {t.currentRevisionId && (
          <details class="snippet">
            <summary>List the records with curl</summary>
            <div class="snippet-body">
              <pre>
                <code>{`curl -H "X-API-Key: $RXS_API_KEY" \\\n  "${origin}/records/?context__knowledge_unit_topic_id=${t.currentRevisionId}"`}</code>
              </pre>
              <CopyButton
                text={`curl -H "X-API-Key: $RXS_API_KEY" "${origin}/records/?context__knowledge_unit_topic_id=${t.currentRevisionId}"`}
                label="Copy command"
              />
            </div>
          </details>
        )}
      </section>

      {t.approval && (
        <section class="panel" aria-labelledby="approval-title" data-testid="approval">
          <h2 id="approval-title" class="panel-title">
            Approval of v{t.revision.version}
          </h2>
          <dl class="facts">
            <dt>Signed by</dt>
            <dd>{t.approval.approved_by_email ?? t.approval.approved_by}</dd>
            <dt>When</dt>
            <dd>
              <DateTime value={t.approval.approved_at} />
            </dd>
            <dt>Meaning</dt>
            <dd>{MEANING_LABELS[t.approval.meaning]}</dd>
            <dt>Reason</dt>
            <dd>{t.approval.reason ?? <span class="muted">None given</span>}</dd>
            <dt>Signature</dt>
            <dd>
              {t.approval.signature === 'password'
                ? 'Password entered again in the web app'
                : t.approval.signature === 'api-key'
                  ? 'Approved through the API with an API key'
                  : 'Approved before signatures were recorded'}
            </dd>
          </dl>
        </section>
      )}

      {draft && (
        <section class="panel panel-draft" aria-labelledby="draft-title">
          <h2 id="draft-title" class="panel-title">
            Draft v{draft.version}
          </h2>
          <p>
            Revision <code>{draft.id}</code>, opened <DateTime value={draft.createdAt} />.{' '}
            {t.currentRevisionId
              ? 'Approving it makes it the current revision, with a new revision id for the records API; the records of the topic move to it.'
              : 'Approve it to make it the first current revision; records can be created after that.'}
          </p>
          <div class="button-row">
            {can('kt:write') && (
              <Link class="button" href={paths.design(t.historyId)}>
                Open in the form editor
              </Link>
            )}
            {can('kt:approve') && (
              <button type="button" class="button button-primary" onClick={() => setConfirmApprove(true)}>
                Approve draft
              </button>
            )}
          </div>
        </section>
      )}

      <section class="panel" aria-labelledby="fields-title">
        <h2 id="fields-title" class="panel-title">
          Fields of the current form
        </h2>
        <p class="muted">
          Each form key maps to a semantic name: the <code>service-key</code> property, else the label, else
          the key. Exports and the records table use these names.
        </p>
        {t.fields.length === 0 ? (
          <p class="muted">The form has no fields yet.</p>
        ) : (
          <div class="table-wrap">
            <table class="table table-compact">
              <thead>
                <tr>
                  <th scope="col">Semantic name</th>
                  <th scope="col">Form key</th>
                  <th scope="col">Named by</th>
                  <th scope="col">Type</th>
                </tr>
              </thead>
              <tbody>
                {t.fields.map((field) => (
                  <tr key={field.key}>
                    <td>{field.name}</td>
                    <td>
                      <code>{field.key}</code>
                    </td>
                    <td>
                      {field.source === 'service-key'
                        ? 'service-key'
                        : field.source === 'label'
                          ? 'label'
                          : 'form key'}
                    </td>
                    <td>{field.type ?? '—'}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <section class="panel" aria-labelledby="history-title">
        <h2 id="history-title" class="panel-title">
          Revision history
        </h2>
        <div class="table-wrap">
          <table class="table" data-testid="revision-history">
            <thead>
              <tr>
                <th scope="col">Version</th>
                <th scope="col">Revision id</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Records
                </th>
                <th scope="col">Created</th>
                <th scope="col">Approved</th>
              </tr>
            </thead>
            <tbody>
              {t.revisions.map((revision) => (
                <tr key={revision.id} class={revision.isCurrent ? 'row-current' : undefined}>
                  <td>v{revision.version}</td>
                  <td>
                    <span class="id-inline">
                      <code>{revision.id}</code>
                      <CopyButton text={revision.id} />
                    </span>
                  </td>
                  <td>
                    {revision.isCurrent ? (
                      <Badge kind="success">Current</Badge>
                    ) : revision.status === 'draft' ? (
                      <Badge kind="info">Draft</Badge>
                    ) : (
                      <Badge>Superseded</Badge>
                    )}
                  </td>
                  <td class="num">{revision.recordCount.toLocaleString('en')}</td>
                  <td>
                    <DateTime value={revision.createdAt} />
                  </td>
                  <td>
                    <DateTime value={revision.approvedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
        <p class="muted small">
          Superseded revisions still answer <code>GET /kt/&#123;id&#125;</code>, with the current one in{' '}
          <code>latest_revision_id</code>; their records moved to the current revision.
        </p>
      </section>

      <ApproveDialog
        open={confirmApprove}
        title={`Approve draft v${draft?.version ?? ''}?`}
        onCancel={() => setConfirmApprove(false)}
        onApprove={approve}
      >
        {t.currentRevisionId ? (
          <>
            <p>
              The draft becomes the current revision with its own revision id, and the topic's{' '}
              {plural(t.recordCount, 'record')} move to it. API clients must use the new revision id from then
              on.
            </p>
            {t.draftRevisionId && (
              <ApprovalImpactNotice open={confirmApprove} revisionId={t.draftRevisionId} />
            )}
          </>
        ) : (
          <p>
            The draft becomes the topic's first approved revision, and records can be created with its form.
          </p>
        )}
      </ApproveDialog>
    </>
  );
}
