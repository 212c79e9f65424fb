import { useState } from 'preact/hooks';
import type { AuditEventView } from '@rxs/web-api';
import { api } from '../api';
import { DateTime, EmptyState, ErrorNotice, Loading } from '../components/ui';
import { useAsync } from '../hooks';

const PAGE = 50;

const ACTION_LABELS: Record<string, string> = {
  'sign-in': 'Signed in',
  'sign-in-failed': 'Failed sign-in',
  'key-created': 'API key created',
  'key-regenerated': 'API key regenerated',
  'key-revoked': 'API key revoked',
  'user-created': 'User added',
  'user-deleted': 'User removed',
  'role-changed': 'Role changed',
  'password-changed': 'Password changed',
  'baseline-signature-refused': 'Baseline signature turned down',
};

/** The tenant's security audit log, newest first; read-only (owners and admins). */
export function AuditLogSection() {
  const [pages, setPages] = useState<AuditEventView[][]>([]);
  const [loadingMore, setLoadingMore] = useState(false);
  const [moreError, setMoreError] = useState<unknown>();
  const first = useAsync(() => api.get<AuditEventView[]>('/audit', { limit: PAGE }), []);
  const events = [...(first.data ?? []), ...pages.flat()];
  const lastPage = pages.length > 0 ? pages[pages.length - 1]! : (first.data ?? []);

  const more = async () => {
    const last = events[events.length - 1];
    if (!last) return;
    setLoadingMore(true);
    setMoreError(undefined);
    try {
      const page = await api.get<AuditEventView[]>('/audit', { limit: PAGE, before: last.id });
      setPages([...pages, page]);
    } catch (error) {
      setMoreError(error);
    } finally {
      setLoadingMore(false);
    }
  };

  return (
    <section class="panel" aria-labelledby="audit-title">
      <h2 id="audit-title" class="panel-title">
        Security audit log
      </h2>
      <p class="muted">
        Sign-ins and failed sign-ins, API keys and changes of users and roles: who, when and from which
        address. Nobody can change or delete these entries.
      </p>
      {first.error !== undefined && <ErrorNotice error={first.error} onRetry={first.reload} />}
      {!first.data && first.loading && <Loading />}
      {first.data && events.length === 0 && (
        <EmptyState title="Nothing recorded yet">Sign-ins and changes appear here.</EmptyState>
      )}
      {events.length > 0 && (
        <div class="table-wrap">
          <table class="table" data-testid="audit-table">
            <thead>
              <tr>
                <th scope="col">When</th>
                <th scope="col">What</th>
                <th scope="col">Who</th>
                <th scope="col">From</th>
                <th scope="col">Concerning</th>
              </tr>
            </thead>
            <tbody>
              {events.map((event) => (
                <tr key={event.id}>
                  <td>
                    <DateTime value={event.at} />
                  </td>
                  <td>
                    {ACTION_LABELS[event.action] ?? event.action}
                    {event.detail && <div class="cell-sub">{event.detail}</div>}
                  </td>
                  <td>{event.actor}</td>
                  <td>{event.client_address ?? '—'}</td>
                  <td>{event.target ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {moreError !== undefined && <ErrorNotice error={moreError} onRetry={() => void more()} />}
      {lastPage.length === PAGE && (
        <button type="button" class="button" disabled={loadingMore} onClick={() => void more()}>
          {loadingMore ? 'Loading…' : 'Older entries'}
        </button>
      )}
    </section>
  );
}
