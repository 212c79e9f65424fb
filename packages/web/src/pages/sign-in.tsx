import { useState } from 'preact/hooks';
import type { SessionInfo, SignInTenantChoice } from '@rxs/web-api';
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
  // Set when the address and password fit users of several tenants: the person picks one.
  const [tenants, setTenants] = useState<SignInTenantChoice['tenants']>();
  const [tenantId, setTenantId] = useState('');

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const tenant = tenants && tenantId ? { tenant_id: tenantId } : {};
      onSignedIn(await api.post<SessionInfo>('/session', { email, password, ...tenant }));
    } catch (failure) {
      const choice =
        failure instanceof ApiError && failure.status === 409 ? tenantChoiceOf(failure) : undefined;
      if (choice) {
        setTenants(choice.tenants);
        setTenantId(choice.tenants[0]?.id ?? '');
        return;
      }
      setError(
        failure instanceof ApiError && failure.status === 429
          ? errorMessage(failure)
          : failure instanceof ApiError && failure.status === 401
            ? 'The e-mail address or the password is wrong.'
            : errorMessage(failure),
      );
      setPassword('');
      setTenants(undefined);
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
              onInput={(e) => {
                setEmail(e.currentTarget.value);
                setTenants(undefined);
              }}
            />
          </Field>
          <PasswordField
            label="Password"
            id="password"
            autoComplete="current-password"
            value={password}
            onValue={setPassword}
          />
          {tenants && (
            <Field
              label="Organisation"
              id="tenant"
              hint="Your address belongs to several organisations: choose one to sign in to."
            >
              <select id="tenant" value={tenantId} onChange={(e) => setTenantId(e.currentTarget.value)}>
                {tenants.map((tenant) => (
                  <option key={tenant.id} value={tenant.id}>
                    {tenant.name}
                  </option>
                ))}
              </select>
            </Field>
          )}
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

/** The tenants offered by a 409 answer to a sign-in, when it is one. */
function tenantChoiceOf(error: ApiError): SignInTenantChoice | undefined {
  const body = error.body as Partial<SignInTenantChoice> | undefined;
  return Array.isArray(body?.tenants) && body.tenants.length > 0 ? (body as SignInTenantChoice) : undefined;
}
