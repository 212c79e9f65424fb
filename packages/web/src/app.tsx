import type { ComponentChildren } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import type { ApiMeta, SessionInfo } from '@rxs/web-api';
import { api, onSignedOut, setCsrfToken } from './api';
import { Badge, ErrorNotice, Link, Loading } from './components/ui';
import { BaselinesPage } from './pages/baselines';
import { ExportPage } from './pages/export';
import { ImportPage } from './pages/import';
import { TraceabilityPage } from './pages/traceability';
import { NotFoundPage } from './pages/not-found';
import { RecordCreatePage, RecordPage } from './pages/record';
import { RecordVersionPage } from './pages/record-history';
import { RecordsPage } from './pages/records';
import { AccountPage } from './pages/settings-account';
import { KeysPage } from './pages/settings-keys';
import { TraceModelPage } from './pages/settings-trace-model';
import { UsersPage } from './pages/settings-users';
import { SignInPage } from './pages/sign-in';
import { DesignPage, NewTopicPage } from './pages/topic-design';
import { TopicPage } from './pages/topic';
import { TopicDocumentPage } from './pages/topic-document';
import { TopicsPage } from './pages/topics';
import { requestPageFocus, usePageFocus } from './page-focus';
import { matchPath, navigate, paths, useLocation } from './router';
import { SessionContext, type SessionState } from './session';

type Boot =
  | { status: 'loading' }
  | { status: 'failed'; error: unknown }
  | { status: 'signed-out'; meta: ApiMeta; notice?: string }
  | { status: 'signed-in'; meta: ApiMeta; info: SessionInfo };

type Page = (params: Record<string, string>) => ComponentChildren;

const ROUTES: [string, Page][] = [
  ['/topics', () => <TopicsPage />],
  ['/topics/new', () => <NewTopicPage />],
  ['/topics/baselines', () => <BaselinesPage />],
  ['/topics/:historyId', (p) => <TopicPage historyId={p.historyId!} />],
  ['/topics/:historyId/design', (p) => <DesignPage historyId={p.historyId!} />],
  ['/topics/:historyId/records', (p) => <RecordsPage historyId={p.historyId!} />],
  ['/topics/:historyId/document', (p) => <TopicDocumentPage historyId={p.historyId!} />],
  ['/topics/:historyId/records/new', (p) => <RecordCreatePage historyId={p.historyId!} />],
  ['/topics/:historyId/records/import', (p) => <ImportPage historyId={p.historyId!} />],
  [
    '/topics/:historyId/records/:recordId',
    (p) => <RecordPage key={p.recordId} historyId={p.historyId!} recordId={p.recordId!} />,
  ],
  [
    '/topics/:historyId/records/:recordId/versions/:n',
    (p) => <RecordVersionPage historyId={p.historyId!} recordId={p.recordId!} n={Number(p.n)} />,
  ],
  ['/export', () => <ExportPage />],
  ['/traceability', () => <TraceabilityPage />],
  ['/settings/keys', () => <KeysPage />],
  ['/settings/users', () => <UsersPage />],
  ['/settings/account', () => <AccountPage />],
  ['/settings/trace-model', () => <TraceModelPage />],
];

const REDIRECTS: Record<string, string> = {
  '/': paths.topics(),
  '/sign-in': paths.topics(),
  '/settings': paths.keys(),
};

export function App() {
  const [boot, setBoot] = useState<Boot>({ status: 'loading' });
  const location = useLocation();

  const start = async () => {
    try {
      const meta = await api.get<ApiMeta>('/meta');
      // The probe answers 204 without a session: being signed out is no failed request.
      const info = await api.get<SessionInfo | undefined>('/session/probe');
      if (!info) return setBoot({ status: 'signed-out', meta });
      setCsrfToken(info.csrfToken);
      setBoot({ status: 'signed-in', meta, info });
    } catch (error) {
      setBoot({ status: 'failed', error });
    }
  };

  useEffect(() => {
    void start();
    return onSignedOut(() =>
      setBoot((current) =>
        current.status === 'signed-in'
          ? { status: 'signed-out', meta: current.meta, notice: 'Your session has ended. Sign in again.' }
          : current,
      ),
    );
  }, []);

  const redirect =
    boot.status === 'signed-in' ? REDIRECTS[location.path.replace(/\/$/, '') || '/'] : undefined;
  useEffect(() => {
    if (redirect) navigate(redirect, { replace: true });
  }, [redirect]);

  if (boot.status === 'loading') return <Loading label="Starting RXS…" />;
  if (boot.status === 'failed') {
    return (
      <main class="boot-failed">
        <ErrorNotice error={boot.error} onRetry={() => void start()} />
      </main>
    );
  }
  if (boot.status === 'signed-out') {
    return (
      <SignInPage
        notice={boot.notice}
        onSignedIn={(info) => {
          setCsrfToken(info.csrfToken);
          requestPageFocus();
          setBoot({ status: 'signed-in', meta: boot.meta, info });
        }}
      />
    );
  }

  const session: SessionState = {
    info: boot.info,
    meta: boot.meta,
    async signOut() {
      await api.delete('/session').catch(() => undefined);
      setCsrfToken(undefined);
      setBoot({ status: 'signed-out', meta: boot.meta, notice: 'You are signed out.' });
      navigate(paths.signIn(), { replace: true });
    },
  };

  let page: ComponentChildren = null;
  for (const [pattern, render] of ROUTES) {
    const params = matchPath(pattern, location.path);
    if (params) {
      page = render(params);
      break;
    }
  }

  return (
    <SessionContext.Provider value={session}>
      <Shell address={`${location.path}?${location.query.toString()}`} path={location.path} session={session}>
        {redirect ? null : (page ?? <NotFoundPage />)}
      </Shell>
    </SessionContext.Provider>
  );
}

function Shell({
  address,
  path,
  session,
  children,
}: {
  /** Path and query: the focus follows each page shown (see `usePageFocus`). */
  address: string;
  path: string;
  session: SessionState;
  children: ComponentChildren;
}) {
  const { user } = session.info;
  const main = useRef<HTMLElement>(null);
  usePageFocus(main, address);
  const section = (prefix: string) => (path === prefix || path.startsWith(`${prefix}/`) ? 'page' : undefined);
  return (
    <>
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="app-header">
        <div class="app-header-inner">
          <Link href={paths.topics()} class="brand">
            <img src="/favicon.svg" alt="" width="24" height="24" />
            <span class="brand-name">RXS</span>
            <span class="brand-tenant">{user.tenantName}</span>
          </Link>
          <nav class="app-nav" aria-label="Main">
            <Link href={paths.topics()} aria-current={section('/topics')}>
              Topics
            </Link>
            <Link href={paths.exports()} aria-current={section('/export')}>
              Export
            </Link>
            <Link href={paths.traceability()} aria-current={section('/traceability')}>
              Traceability
            </Link>
            <Link href={paths.keys()} aria-current={section('/settings')}>
              Settings
            </Link>
          </nav>
          <div class="user-menu">
            <span class="user-email" title={user.email}>
              {user.email}
            </span>
            <Badge kind="info">{user.role}</Badge>
            <button
              type="button"
              class="button button-small button-ghost"
              onClick={() => void session.signOut()}
            >
              Sign out
            </button>
          </div>
        </div>
      </header>
      <main id="main" class="app-main" tabIndex={-1} ref={main}>
        {children}
      </main>
    </>
  );
}
