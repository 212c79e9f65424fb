import { useState } from 'preact/hooks';
import type { SavedView, SavedViewPut, TraceRole } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import { useAsync } from '../hooks';
import { paths } from '../router';
import { ConfirmDialog, Link } from './ui';

/** What the page shows: some roles of the trace model (all when neither is given), or topics. */
export interface TraceabilityScope {
  roles?: string[];
  revisions?: string[];
}

/** The page's address for a scope: `?roles=` or `?revisions=`, the whole model without either. */
export function scopePath(scope: TraceabilityScope): string {
  if (scope.revisions?.length) return paths.traceability(scope.revisions);
  if (scope.roles?.length)
    return `${paths.traceability()}?roles=${scope.roles.map(encodeURIComponent).join(',')}`;
  return paths.traceability();
}

/** "System Requirements → Verification Tests (verified by)": a role as the rule it makes. */
export const roleRuleName = (role: TraceRole) =>
  `${role.to.topic_name ?? role.to.topic_history_id} → ${role.from.topic_name ?? role.from.topic_history_id} (${role.backward_name})`;

/**
 * The roles of the trace model to show (each a rule, in the model's order), and the tenant's saved
 * views: open one, save what is shown under a name (the same name replaces it), delete one. Saving
 * and deleting take `traces:write` (`canWrite`); everyone lists and opens.
 */
export function TraceabilityViews({
  roles,
  shown,
  canWrite,
  onOpen,
  onMessage,
}: {
  roles: readonly TraceRole[];
  /** What the page shows now: the scope a save keeps. */
  shown: TraceabilityScope;
  canWrite: boolean;
  onOpen: (scope: TraceabilityScope) => void;
  onMessage: (kind: 'success' | 'error', text: string) => void;
}) {
  const views = useAsync(() => api.get<SavedView[]>('/traceability/views'), []);
  const [ticked, setTicked] = useState<Set<string>>(
    () => new Set(shown.revisions ? [] : (shown.roles ?? roles.map((role) => role.id))),
  );
  const [name, setName] = useState('');
  const [deleting, setDeleting] = useState<string>();
  const [busy, setBusy] = useState(false);

  const showRoles = (event: Event) => {
    event.preventDefault();
    const chosen = roles.filter((role) => ticked.has(role.id)).map((role) => role.id);
    onOpen(chosen.length === roles.length ? {} : { roles: chosen });
  };
  const save = async (event: Event) => {
    event.preventDefault();
    const viewName = name.trim();
    setBusy(true);
    try {
      const scope = shown.revisions
        ? { revisions: shown.revisions }
        : { roles: shown.roles ?? roles.map((r) => r.id) };
      await api.put(`/traceability/views/${encodeURIComponent(viewName)}`, scope);
      onMessage('success', `Saved the view “${viewName}”.`);
      setName('');
      views.reload();
    } catch (failure) {
      onMessage('error', errorMessage(failure));
    } finally {
      setBusy(false);
    }
  };
  const remove = async () => {
    if (deleting === undefined) return;
    setBusy(true);
    try {
      await api.delete(`/traceability/views/${encodeURIComponent(deleting)}`);
      onMessage('success', `Deleted the view “${deleting}”.`);
      views.reload();
    } catch (failure) {
      onMessage('error', errorMessage(failure));
    } finally {
      setBusy(false);
      setDeleting(undefined);
    }
  };

  return (
    <section class="panel traceability-views" aria-labelledby="views-title" data-testid="traceability-views">
      <h2 id="views-title" class="panel-title">
        View
      </h2>
      {roles.length > 0 && (
        <form onSubmit={showRoles}>
          <fieldset class="traceability-roles">
            <legend>Roles of the trace model, in the order of the V (each is a rule)</legend>
            {roles.map((role) => (
              <label class="checkbox" key={role.id}>
                <input
                  type="checkbox"
                  checked={ticked.has(role.id)}
                  onChange={(e) => {
                    const next = new Set(ticked);
                    if (e.currentTarget.checked) next.add(role.id);
                    else next.delete(role.id);
                    setTicked(next);
                  }}
                />
                <span>{roleRuleName(role)}</span>
              </label>
            ))}
          </fieldset>
          <div class="button-row">
            <button type="submit" class="button" disabled={ticked.size === 0}>
              Show these roles
            </button>
          </div>
        </form>
      )}
      <h3 class="traceability-views-title">Saved views</h3>
      {views.error !== undefined && <p class="field-error">{errorMessage(views.error)}</p>}
      {views.data?.length === 0 && <p class="muted">No saved view yet.</p>}
      {views.data && views.data.length > 0 && (
        <ul class="traceability-view-list" data-testid="saved-views">
          {views.data.map((view) => {
            const scope = view.revisions ? { revisions: view.revisions } : { roles: view.roles ?? [] };
            return (
              <li key={view.name}>
                <Link href={scopePath(scope)}>{view.name}</Link>{' '}
                <span class="muted">
                  ({view.revisions ? `${view.revisions.length} topics` : `${view.roles?.length ?? 0} roles`})
                </span>{' '}
                {canWrite && (
                  <button
                    type="button"
                    class="button button-small"
                    aria-label={`Delete the view ${view.name}`}
                    onClick={() => setDeleting(view.name)}
                  >
                    Delete
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
      {canWrite && (
        <form class="traceability-save" onSubmit={(e) => void save(e)}>
          <label class="field">
            <span>Save what is shown as</span>
            <input
              type="text"
              maxLength={100}
              value={name}
              placeholder="View name"
              onInput={(e) => setName(e.currentTarget.value)}
            />
          </label>
          <button type="submit" class="button" disabled={busy || name.trim() === ''}>
            Save view
          </button>
        </form>
      )}
      <ConfirmDialog
        open={deleting !== undefined}
        title="Delete the view"
        confirmLabel="Delete"
        busy={busy}
        onConfirm={() => void remove()}
        onCancel={() => setDeleting(undefined)}
      >
        <p>Delete the saved view “{deleting}” for everyone in the tenant? What it shows stays as it is.</p>
      </ConfirmDialog>
    </section>
  );
}
