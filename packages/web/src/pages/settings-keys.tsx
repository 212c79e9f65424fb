import { useState } from 'preact/hooks';
import type { ApiKeyView, NewApiKeyView, UserView } from '@rxs/web-api';
import { api, errorMessage, fieldErrorsOf } from '../api';
import {
  Badge,
  ConfirmDialog,
  CopyButton,
  DateTime,
  EmptyState,
  ErrorNotice,
  Field,
  Loading,
  Notice,
} from '../components/ui';
import { useAsync, useTitle } from '../hooks';
import { useCan, useSession } from '../session';
import { SettingsHeader } from './settings-nav';

const EXPIRY_CHOICES = [
  { value: '30', label: '30 days' },
  { value: '90', label: '90 days' },
  { value: '365', label: '1 year' },
  { value: 'never', label: 'Never' },
  { value: 'date', label: 'On a date…' },
];

function expiryOf(choice: string, date: string): string | null | undefined {
  if (choice === 'never') return null;
  if (choice === 'date') return date ? new Date(`${date}T23:59:59`).toISOString() : undefined;
  return new Date(Date.now() + Number(choice) * 86_400_000).toISOString();
}

function keyStatus(key: ApiKeyView) {
  if (key.revoked_at) return <Badge kind="danger">Revoked</Badge>;
  if (key.expires_at && Date.parse(key.expires_at) <= Date.now())
    return <Badge kind="warning">Expired</Badge>;
  return <Badge kind="success">Active</Badge>;
}

/** The key itself, shown once right after it was made. */
function NewKeyPanel({ created, onDone }: { created: NewApiKeyView; onDone: () => void }) {
  const origin = window.location.origin;
  return (
    <section class="panel panel-new-key" aria-labelledby="new-key-title" data-testid="new-key">
      <h2 id="new-key-title" class="panel-title">
        Your new API key “{created.name}”
      </h2>
      <Notice kind="warning" title="Copy the key now">
        It is shown only this once and stored only as a hash. If it is lost, regenerate it.
      </Notice>
      <div class="key-box">
        <label class="visually-hidden" for="new-key-value">
          API key
        </label>
        <input
          id="new-key-value"
          class="key-value"
          readOnly
          value={created.key}
          onFocus={(e) => e.currentTarget.select()}
          data-testid="new-key-value"
        />
        <CopyButton text={created.key} label="Copy key" name="Copy key" />
      </div>
      <p class="muted small">
        Send it in the <code>X-API-Key</code> header, for example{' '}
        <code>curl -H "X-API-Key: $RXS_API_KEY" {origin}/kt/?current=true</code>
        {created.expires_at ? (
          <>
            . It expires <DateTime value={created.expires_at} />.
          </>
        ) : (
          '. It does not expire.'
        )}
      </p>
      <button type="button" class="button" onClick={onDone}>
        I have stored the key
      </button>
    </section>
  );
}

export function KeysPage() {
  useTitle('API keys');
  const can = useCan();
  const { info } = useSession();
  const manages = can('keys:manage');
  const mayCreate = manages || info.canCreateOwnKeys;
  const [showRevoked, setShowRevoked] = useState(false);
  const keys = useAsync(
    () => api.get<ApiKeyView[]>('/keys', { include_revoked: showRevoked }),
    [showRevoked],
  );
  const users = useAsync(
    () => (can('users:manage') ? api.get<UserView[]>('/users') : Promise.resolve([] as UserView[])),
    [],
  );
  const [name, setName] = useState('');
  const [expiry, setExpiry] = useState('90');
  const [date, setDate] = useState('');
  const [userId, setUserId] = useState(info.user.id);
  const [busy, setBusy] = useState(false);
  const [formError, setFormError] = useState<{ name?: string; expiry?: string; other?: string }>({});
  const [created, setCreated] = useState<NewApiKeyView>();
  const [revoking, setRevoking] = useState<ApiKeyView>();
  const [regenerating, setRegenerating] = useState<ApiKeyView>();
  const [actionError, setActionError] = useState<string>();

  const create = async (event: Event) => {
    event.preventDefault();
    const expires_at = expiryOf(expiry, date);
    if (!name.trim()) return setFormError({ name: 'Give the key a name, such as “CI export”.' });
    if (expires_at === undefined) return setFormError({ expiry: 'Choose the date the key expires.' });
    setBusy(true);
    setFormError({});
    try {
      const key = await api.post<NewApiKeyView>('/keys', {
        name: name.trim(),
        expires_at,
        ...(userId !== info.user.id ? { user_id: userId } : {}),
      });
      setCreated(key);
      setName('');
      keys.reload();
    } catch (error) {
      const placed = fieldErrorsOf(error);
      if (placed.expires_at || placed.name) setFormError({ expiry: placed.expires_at, name: placed.name });
      else setFormError({ other: errorMessage(error) });
    } finally {
      setBusy(false);
    }
  };

  const revoke = async () => {
    if (!revoking) return;
    setBusy(true);
    try {
      await api.delete(`/keys/${revoking.id}`);
      // A revoked key is no use to copy: its panel goes with it.
      if (created?.id === revoking.id) setCreated(undefined);
      keys.reload();
    } catch (error) {
      setActionError(errorMessage(error));
    } finally {
      setRevoking(undefined);
      setBusy(false);
    }
  };

  const regenerate = async () => {
    if (!regenerating) return;
    setBusy(true);
    try {
      setCreated(await api.post<NewApiKeyView>(`/keys/${regenerating.id}/regenerate`));
      keys.reload();
    } catch (error) {
      setActionError(errorMessage(error));
    } finally {
      setRegenerating(undefined);
      setBusy(false);
    }
  };

  const mayChange = (key: ApiKeyView, action: 'create' | 'revoke') =>
    !key.revoked_at &&
    (manages || (key.user_id === info.user.id && (action === 'revoke' || info.canCreateOwnKeys)));

  return (
    <>
      <SettingsHeader />
      <p class="page-lead">
        API keys let scripts and tools such as <code>rxs export</code> call the techdoc, records and tracer
        APIs with your permissions{manages ? ', or those of the user a key is issued to' : ''}.
      </p>
      {created && <NewKeyPanel created={created} onDone={() => setCreated(undefined)} />}
      {actionError && (
        <Notice kind="error" onDismiss={() => setActionError(undefined)}>
          {actionError}
        </Notice>
      )}

      {mayCreate ? (
        <form class="panel" onSubmit={create} aria-labelledby="create-key-title">
          <h2 id="create-key-title" class="panel-title">
            Create a key
          </h2>
          {formError.other && <Notice kind="error">{formError.other}</Notice>}
          <div class="form-grid">
            <Field label="Name" id="key-name" error={formError.name} hint="What or who uses it">
              <input
                id="key-name"
                value={name}
                maxLength={100}
                onInput={(e) => setName(e.currentTarget.value)}
              />
            </Field>
            <Field label="Expires" id="key-expiry" error={formError.expiry}>
              <select id="key-expiry" value={expiry} onChange={(e) => setExpiry(e.currentTarget.value)}>
                {EXPIRY_CHOICES.map((choice) => (
                  <option key={choice.value} value={choice.value}>
                    {choice.label}
                  </option>
                ))}
              </select>
            </Field>
            {expiry === 'date' && (
              <Field label="Expiry date" id="key-date">
                <input
                  id="key-date"
                  type="date"
                  value={date}
                  min={new Date(Date.now() + 86_400_000).toISOString().slice(0, 10)}
                  onInput={(e) => setDate(e.currentTarget.value)}
                />
              </Field>
            )}
            {manages && users.data && users.data.length > 1 && (
              <Field label="For user" id="key-user" hint="The key acts with this user's role">
                <select id="key-user" value={userId} onChange={(e) => setUserId(e.currentTarget.value)}>
                  {users.data.map((user) => (
                    <option key={user.id} value={user.id}>
                      {user.email} ({user.role})
                    </option>
                  ))}
                </select>
              </Field>
            )}
          </div>
          <button type="submit" class="button button-primary" disabled={busy}>
            {busy ? 'Creating…' : 'Create key'}
          </button>
        </form>
      ) : (
        <Notice kind="info" title="Viewers do not create API keys">
          Your role reads only. An owner or admin of your organisation can issue a key for you; you can see
          and revoke your keys here.
        </Notice>
      )}

      <section class="panel" aria-labelledby="keys-title">
        <div class="panel-head">
          <h2 id="keys-title" class="panel-title">
            {manages ? 'Keys of your organisation' : 'Your keys'}
          </h2>
          <label class="checkbox">
            <input
              type="checkbox"
              checked={showRevoked}
              onChange={(e) => setShowRevoked(e.currentTarget.checked)}
            />
            Show revoked keys
          </label>
        </div>
        {keys.error !== undefined && <ErrorNotice error={keys.error} onRetry={keys.reload} />}
        {!keys.data && keys.loading && <Loading />}
        {keys.data && keys.data.length === 0 && (
          <EmptyState title="No API keys">
            {mayCreate
              ? 'Create a key above to call the API from scripts and tools.'
              : 'No key was issued to you yet.'}
          </EmptyState>
        )}
        {keys.data && keys.data.length > 0 && (
          <div class="table-wrap">
            <table class="table" data-testid="keys-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  {manages && <th scope="col">User</th>}
                  <th scope="col">Key id</th>
                  <th scope="col">Created</th>
                  <th scope="col">Expires</th>
                  <th scope="col">Last used</th>
                  <th scope="col">Status</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {keys.data.map((key) => (
                  <tr key={key.id}>
                    <td>{key.name}</td>
                    {manages && <td>{key.user_email}</td>}
                    <td>
                      <code>rxs_{key.id}_…</code>
                    </td>
                    <td>
                      <DateTime value={key.created_at} />
                    </td>
                    <td>
                      {key.expires_at ? (
                        <DateTime value={key.expires_at} />
                      ) : (
                        <span class="muted">Never</span>
                      )}
                    </td>
                    <td>
                      {key.last_used_at ? (
                        <DateTime value={key.last_used_at} />
                      ) : (
                        <span class="muted">Not yet</span>
                      )}
                    </td>
                    <td>{keyStatus(key)}</td>
                    <td class="actions">
                      {mayChange(key, 'create') && (
                        <button
                          type="button"
                          class="button button-small"
                          aria-label={`Regenerate ${key.name}`}
                          onClick={() => setRegenerating(key)}
                        >
                          Regenerate
                        </button>
                      )}
                      {mayChange(key, 'revoke') && (
                        <button
                          type="button"
                          class="button button-small button-danger-outline"
                          aria-label={`Revoke ${key.name}`}
                          onClick={() => setRevoking(key)}
                        >
                          Revoke
                        </button>
                      )}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>

      <ConfirmDialog
        open={revoking !== undefined}
        title={`Revoke “${revoking?.name ?? ''}”?`}
        confirmLabel="Revoke key"
        busy={busy}
        onCancel={() => setRevoking(undefined)}
        onConfirm={() => void revoke()}
      >
        <p>Every request with this key is refused from now on (401). This cannot be undone.</p>
      </ConfirmDialog>
      <ConfirmDialog
        open={regenerating !== undefined}
        title={`Regenerate “${regenerating?.name ?? ''}”?`}
        confirmLabel="Regenerate key"
        tone="primary"
        busy={busy}
        onCancel={() => setRegenerating(undefined)}
        onConfirm={() => void regenerate()}
      >
        <p>
          A new key with the same name and lifetime replaces it; the old key stops working at once. Update
          every script that uses it.
        </p>
      </ConfirmDialog>
    </>
  );
}
