import { Link, PageHeader } from '../components/ui';
import { paths, useLocation } from '../router';
import { useCan } from '../session';

/** The Settings header with its tabs; Users only for those who manage users, the trace model for everyone (read-only for most). */
export function SettingsHeader() {
  const can = useCan();
  const { path } = useLocation();
  const tabs = [
    { href: paths.keys(), label: 'API keys' },
    ...(can('users:manage') ? [{ href: paths.users(), label: 'Users and roles' }] : []),
    { href: paths.traceModel(), label: 'Trace model' },
    { href: paths.account(), label: 'Account' },
  ];
  return (
    <PageHeader title="Settings">
      <nav class="tabs" aria-label="Settings">
        {tabs.map((tab) => (
          <Link key={tab.href} href={tab.href} aria-current={path === tab.href ? 'page' : undefined}>
            {tab.label}
          </Link>
        ))}
      </nav>
    </PageHeader>
  );
}
