import { useState } from 'preact/hooks';
import { api, errorMessage, fieldErrorsOf } from '../api';
import { Badge, DateTime, Notice, PasswordField } from '../components/ui';
import { useTitle } from '../hooks';
import { useSession } from '../session';
import { SettingsHeader } from './settings-nav';

export function AccountPage() {
  useTitle('Account');
  const { info, meta } = useSession();
  const minLength = meta.minPasswordLength;
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [repeat, setRepeat] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<{ kind: 'success' | 'error'; text: string }>();
  const [busy, setBusy] = useState(false);

  const change = async (event: Event) => {
    event.preventDefault();
    const problems: Record<string, string> = {};
    if (!current) problems.current_password = 'Enter your current password.';
    if (next.length < minLength) problems.new_password = `At least ${minLength} characters.`;
    else if (next !== repeat) problems.repeat = 'The two new passwords differ.';
    setErrors(problems);
    if (Object.keys(problems).length > 0) return;
    setBusy(true);
    setMessage(undefined);
    try {
      await api.post('/account/password', { current_password: current, new_password: next });
      setMessage({
        kind: 'success',
        text: 'Your password was changed. Your other sessions were signed out.',
      });
      setCurrent('');
      setNext('');
      setRepeat('');
    } catch (error) {
      const placed = fieldErrorsOf(error);
      if (Object.keys(placed).length > 0) setErrors(placed);
      else setMessage({ kind: 'error', text: errorMessage(error) });
    } finally {
      setBusy(false);
    }
  };

  return (
    <>
      <SettingsHeader />
      <section class="panel" aria-labelledby="me-title">
        <h2 id="me-title" class="panel-title">
          Signed in
        </h2>
        <dl class="facts">
          <dt>E-mail</dt>
          <dd>{info.user.email}</dd>
          <dt>Organisation</dt>
          <dd>{info.user.tenantName}</dd>
          <dt>Role</dt>
          <dd>
            <Badge kind="info">{info.user.role}</Badge>
          </dd>
          <dt>Permissions</dt>
          <dd>
            {info.permissions.map((p) => (
              <code key={p} class="permission">
                {p}
              </code>
            ))}
          </dd>
          <dt>Session ends</dt>
          <dd>
            <DateTime value={info.expiresAt} />{' '}
            <span class="muted">(if unused; or when the browser closes)</span>
          </dd>
        </dl>
      </section>
      <form class="panel" onSubmit={change} aria-labelledby="password-title" noValidate>
        <h2 id="password-title" class="panel-title">
          Change your password
        </h2>
        {message && <Notice kind={message.kind}>{message.text}</Notice>}
        <div class="form-grid">
          <PasswordField
            label="Current password"
            id="current-password"
            autoComplete="current-password"
            value={current}
            onValue={setCurrent}
            error={errors.current_password}
          />
          <PasswordField
            label="New password"
            id="new-password"
            autoComplete="new-password"
            value={next}
            onValue={setNext}
            error={errors.new_password}
            hint={`At least ${minLength} characters`}
          />
          <PasswordField
            label="New password again"
            id="repeat-password"
            autoComplete="new-password"
            value={repeat}
            onValue={setRepeat}
            error={errors.repeat}
          />
        </div>
        <button type="submit" class="button button-primary" disabled={busy}>
          Change password
        </button>
      </form>
    </>
  );
}
