import { useState } from 'preact/hooks';
import type { Role, UserView } from '@rxs/web-api';
import { api, errorMessage, fieldErrorsOf } from '../api';
import {
  ConfirmDialog,
  DateTime,
  Dialog,
  ErrorNotice,
  Field,
  Loading,
  Notice,
  PasswordField,
} from '../components/ui';
import { useAsync, useTitle } from '../hooks';
import { useCan, useSession } from '../session';
import { AuditLogSection } from './settings-audit';
import { SettingsHeader } from './settings-nav';

const ROLE_NOTES: Record<Role, string> = {
  owner: 'Everything, including making other owners',
  admin: 'Everything but the owner role: approves topics, manages keys and users',
  editor: 'Edits records, traces and topic drafts; own API keys',
  viewer: 'Reads topics, records and traces',
};

export function UsersPage() {
  useTitle('Users and roles');
  const can = useCan();
  const { info, meta } = useSession();
  const minLength = meta.minPasswordLength;
  const users = useAsync(
    () => (can('users:manage') ? api.get<UserView[]>('/users') : Promise.resolve([])),
    [],
  );
  const [form, setForm] = useState({ email: '', name: '', role: 'editor' as Role, password: '' });
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ kind: 'success' | 'error'; text: string }>();
  const [deleting, setDeleting] = useState<UserView>();
  const [resetting, setResetting] = useState<UserView>();
  const [newPassword, setNewPassword] = useState('');

  if (!can('users:manage')) {
    return (
      <>
        <SettingsHeader />
        <Notice kind="warning" title="Only owners and admins manage users">
          Ask an owner or admin of your organisation.
        </Notice>
      </>
    );
  }
  // Only an owner grants or changes the owner role.
  const grantable = meta.roles.filter((role) => role !== 'owner' || info.user.role === 'owner');

  const add = async (event: Event) => {
    event.preventDefault();
    const problems: Record<string, string> = {};
    if (!/^[^\s@]+@[^\s@]+$/.test(form.email.trim())) problems.email = 'Enter an e-mail address.';
    if (form.password.length < minLength) problems.password = `At least ${minLength} characters.`;
    setErrors(problems);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    setMessage(undefined);
    try {
      const user = await api.post<UserView>('/users', {
        ...form,
        email: form.email.trim(),
        name: form.name.trim() || undefined,
      });
      setMessage({ kind: 'success', text: `${user.email} can now sign in as ${user.role}.` });
      setForm({ email: '', name: '', role: form.role, password: '' });
      users.reload();
    } catch (error) {
      const placed = fieldErrorsOf(error);
      if (Object.keys(placed).length > 0) setErrors(placed);
      else setMessage({ kind: 'error', text: errorMessage(error) });
    } finally {
      setBusy(false);
    }
  };

  const changeRole = async (user: UserView, role: Role) => {
    setMessage(undefined);
    try {
      await api.patch(`/users/${user.id}`, { role });
      setMessage({ kind: 'success', text: `${user.email} is now ${role}.` });
    } catch (error) {
      setMessage({ kind: 'error', text: errorMessage(error) });
    }
    users.reload();
  };

  const remove = async () => {
    if (!deleting) return;
    setBusy(true);
    try {
      await api.delete(`/users/${deleting.id}`);
      setMessage({ kind: 'success', text: `${deleting.email} was removed; their keys and sessions ended.` });
      users.reload();
    } catch (error) {
      setMessage({ kind: 'error', text: errorMessage(error) });
    } finally {
      setDeleting(undefined);
      setBusy(false);
    }
  };

  const resetPassword = async (event: Event) => {
    event.preventDefault();
    if (!resetting || newPassword.length < minLength) return;
    setBusy(true);
    try {
      await api.post(`/users/${resetting.id}/password`, { password: newPassword });
      setMessage({
        kind: 'success',
        text: `The password of ${resetting.email} was set; their sessions ended.`,
      });
      setResetting(undefined);
      setNewPassword('');
    } catch (error) {
      setMessage({ kind: 'error', text: errorMessage(error) });
      setResetting(undefined);
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <SettingsHeader />
      {message && (
        <Notice kind={message.kind} onDismiss={() => setMessage(undefined)}>
          {message.text}
        </Notice>
      )}
      <form class="panel" onSubmit={add} aria-labelledby="add-user-title" noValidate>
        <h2 id="add-user-title" class="panel-title">
          Add a user
        </h2>
        <div class="form-grid">
          <Field label="E-mail" id="user-email" error={errors.email}>
            <input
              id="user-email"
              type="email"
              autoComplete="off"
              value={form.email}
              onInput={(e) => setForm({ ...form, email: e.currentTarget.value })}
            />
          </Field>
          <Field label="Name" id="user-name" hint="Optional">
            <input
              id="user-name"
              value={form.name}
              onInput={(e) => setForm({ ...form, name: e.currentTarget.value })}
            />
          </Field>
          <Field label="Role" id="user-role" error={errors.role} hint={ROLE_NOTES[form.role]}>
            <select
              id="user-role"
              value={form.role}
              onChange={(e) => setForm({ ...form, role: e.currentTarget.value as Role })}
            >
              {grantable.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
          </Field>
          <PasswordField
            label="Initial password"
            id="user-password"
            autoComplete="new-password"
            value={form.password}
            onValue={(password) => setForm({ ...form, password })}
            error={errors.password}
            hint={`At least ${minLength} characters; share it safely`}
          />
        </div>
        <button type="submit" class="button button-primary" disabled={busy}>
          Add user
        </button>
      </form>

      <section class="panel" aria-labelledby="users-title">
        <h2 id="users-title" class="panel-title">
          Users of {info.user.tenantName}
        </h2>
        {users.error !== undefined && <ErrorNotice error={users.error} onRetry={users.reload} />}
        {!users.data && users.loading && <Loading />}
        {users.data && (
          <div class="table-wrap">
            <table class="table" data-testid="users-table">
              <thead>
                <tr>
                  <th scope="col">User</th>
                  <th scope="col">Role</th>
                  <th scope="col">Added</th>
                  <th scope="col">
                    <span class="visually-hidden">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {users.data.map((user) => {
                  const self = user.id === info.user.id;
                  const locked = self || (user.role === 'owner' && info.user.role !== 'owner');
                  return (
                    <tr key={user.id}>
                      <td>
                        <strong>{user.email}</strong>
                        {self && <span class="muted"> (you)</span>}
                        {user.name !== user.email && <div class="cell-sub">{user.name}</div>}
                      </td>
                      <td>
                        <select
                          aria-label={`Role of ${user.email}`}
                          value={user.role}
                          disabled={locked}
                          title={self ? 'Another owner or admin changes your role' : undefined}
                          onChange={(e) => void changeRole(user, e.currentTarget.value as Role)}
                        >
                          {(locked ? meta.roles : grantable).map((role) => (
                            <option key={role} value={role}>
                              {role}
                            </option>
                          ))}
                        </select>
                      </td>
                      <td>
                        <DateTime value={user.created_at} />
                      </td>
                      <td class="actions">
                        {!locked && (
                          <>
                            <button
                              type="button"
                              class="button button-small"
                              onClick={() => setResetting(user)}
                            >
                              Set password
                            </button>
                            <button
                              type="button"
                              class="button button-small button-danger-outline"
                              aria-label={`Remove ${user.email}`}
                              onClick={() => setDeleting(user)}
                            >
                              Remove
                            </button>
                          </>
                        )}
                      </td>
                    </tr>
                  );
                })}
              </tbody>
            </table>
          </div>
        )}
        <dl class="role-notes">
          {meta.roles.map((role) => (
            <div key={role}>
              <dt>{role}</dt>
              <dd>{ROLE_NOTES[role]}</dd>
            </div>
          ))}
        </dl>
      </section>

      <AuditLogSection />

      <ConfirmDialog
        open={deleting !== undefined}
        title={`Remove ${deleting?.email ?? ''}?`}
        confirmLabel="Remove user"
        busy={busy}
        onCancel={() => setDeleting(undefined)}
        onConfirm={() => void remove()}
      >
        <p>They can no longer sign in, and their API keys stop working at once. Their records stay.</p>
      </ConfirmDialog>
      <Dialog
        open={resetting !== undefined}
        title={`Set the password of ${resetting?.email ?? ''}`}
        onClose={() => setResetting(undefined)}
      >
        <form onSubmit={resetPassword} class="stack">
          <PasswordField
            label="New password"
            id="reset-password"
            autoComplete="new-password"
            value={newPassword}
            onValue={setNewPassword}
            hint={`At least ${minLength} characters. Their sessions end.`}
          />
          <div class="dialog-footer">
            <button type="button" class="button" onClick={() => setResetting(undefined)}>
              Cancel
            </button>
            <button
              type="submit"
              class="button button-primary"
              disabled={busy || newPassword.length < minLength}
            >
              Set password
            </button>
          </div>
        </form>
      </Dialog>
    </>
  );
}
