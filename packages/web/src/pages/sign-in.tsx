import { useState } from 'preact/hooks';
import type { SessionInfo } from '@rxs/web-api';
import { api, ApiError, errorMessage } from '../api';
import { Field, Notice, PasswordField } from '../components/ui';
import { useTitle } from '../hooks';

export function SignInPage({
  notice,
  onSignedIn,
}: {
  notice?: string;
  onSignedIn: (info: SessionInfo) => void;
}) {
  useTitle('Sign in');
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      onSignedIn(await api.post<SessionInfo>('/session', { email, password }));
    } catch (failure) {
      setError(
        failure instanceof ApiError && failure.status === 429
          ? errorMessage(failure)
          : failure instanceof ApiError && failure.status === 401
            ? 'The e-mail address or the password is wrong.'
            : errorMessage(failure),
      );
      setPassword('');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main class="sign-in" id="main">
      <div class="sign-in-card">
        <div class="sign-in-brand">
          <img src="/favicon.svg" alt="" width="40" height="40" />
          <div>
            <h1>Sign in to RXS</h1>
            <p class="muted">Records Export Service</p>
          </div>
        </div>
        {notice && !error && <Notice kind="info">{notice}</Notice>}
        {error && <Notice kind="error">{error}</Notice>}
        <form onSubmit={submit} noValidate>
          <Field label="E-mail" id="email">
            <input
              id="email"
              name="email"
              type="email"
              autoComplete="username"
              required
              autoFocus
              value={email}
              onInput={(e) => setEmail(e.currentTarget.value)}
            />
          </Field>
          <PasswordField
            label="Password"
            id="password"
            autoComplete="current-password"
            value={password}
            onValue={setPassword}
          />
          <button
            type="submit"
            class="button button-primary button-block"
            disabled={busy || !email || !password}
          >
            {busy ? 'Signing in…' : 'Sign in'}
          </button>
        </form>
        <p class="sign-in-help muted">
          No account yet? An owner or admin of your organisation adds you in Settings → Users. The first owner
          is created with <code>rxs admin bootstrap</code>.
        </p>
      </div>
    </main>
  );
}
