import { useEffect, useState } from 'preact/hooks';
import { requestPageFocus } from './page-focus';

/**
 * A small history-API router. Paths never start with /kt/, /records/ or /traces/: those belong to
 * the services on the same origin, and a reload must reach the app, not the API.
 */
export interface Location {
  path: string;
  query: URLSearchParams;
}

const NAVIGATED = 'rxs:navigated';

function current(): Location {
  return { path: window.location.pathname, query: new URLSearchParams(window.location.search) };
}

let leaveWarning: string | null = null;

/** While set, leaving the page by an in-app link asks first (a page with unsaved edits sets it). */
export function setLeaveWarning(message: string | null): void {
  leaveWarning = message;
}

/** `force` skips the unsaved-edits question: for the navigation that follows a successful save. */
export function navigate(to: string, options: { replace?: boolean; force?: boolean } = {}): void {
  if (to === window.location.pathname + window.location.search) return;
  if (leaveWarning && !options.force && !window.confirm(leaveWarning)) return;
  if (options.force) leaveWarning = null;
  const from = window.location.pathname;
  if (options.replace) window.history.replaceState(null, '', to);
  else window.history.pushState(null, '', to);
  // Another page takes the focus; a replaced query is the same page in another state (a table's sort).
  if (!options.replace || window.location.pathname !== from) requestPageFocus();
  window.dispatchEvent(new Event(NAVIGATED));
  if (!options.replace) window.scrollTo(0, 0);
}

export function useLocation(): Location {
  const [location, setLocation] = useState(current);
  useEffect(() => {
    const update = () => setLocation(current());
    window.addEventListener('popstate', update);
    window.addEventListener(NAVIGATED, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(NAVIGATED, update);
    };
  }, []);
  return location;
}

/** Matches `/topics/:id` against a path; the parameters, or undefined. */
export function matchPath(pattern: string, path: string): Record<string, string> | undefined {
  const names: string[] = [];
  const source = pattern
    .split('/')
    .map((part) => {
      if (part.startsWith(':')) {
        names.push(part.slice(1));
        return '([^/]+)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  const match = new RegExp(`^${source}/?$`).exec(path);
  if (!match) return undefined;
  return Object.fromEntries(names.map((name, i) => [name, decodeURIComponent(match[i + 1]!)]));
}

/** Client-side navigation for plain links; modified clicks (new tab, ...) keep the browser's way. */
export function linkClick(event: MouseEvent): void {
  const anchor = event.currentTarget as HTMLAnchorElement;
  if (
    event.defaultPrevented ||
    event.button !== 0 ||
    event.metaKey ||
    event.ctrlKey ||
    event.shiftKey ||
    event.altKey ||
    anchor.target ||
    anchor.hasAttribute('download') ||
    anchor.origin !== window.location.origin
  )
    return;
  event.preventDefault();
  navigate(anchor.pathname + anchor.search);
}

/** The app's paths, built in one place. */
export const paths = {
  topics: () => '/topics',
  newTopic: () => '/topics/new',
  topic: (historyId: string) => `/topics/${historyId}`,
  design: (historyId: string) => `/topics/${historyId}/design`,
  records: (historyId: string) => `/topics/${historyId}/records`,
  topicDocument: (historyId: string, asOf?: string) =>
    asOf
      ? `/topics/${historyId}/document?as_of=${encodeURIComponent(asOf)}`
      : `/topics/${historyId}/document`,
  newRecord: (historyId: string) => `/topics/${historyId}/records/new`,
  importRecords: (historyId: string) => `/topics/${historyId}/records/import`,
  record: (historyId: string, recordId: string) => `/topics/${historyId}/records/${recordId}`,
  recordVersion: (historyId: string, recordId: string, n: number) =>
    `/topics/${historyId}/records/${recordId}/versions/${n}`,
  baselines: (historyId?: string) =>
    historyId ? `/topics/baselines?topic=${historyId}` : '/topics/baselines',
  exports: (revisionIds?: string[]) =>
    revisionIds?.length ? `/export?revisions=${revisionIds.join(',')}` : '/export',
  traceability: (revisionIds?: string[]) =>
    revisionIds?.length ? `/traceability?revisions=${revisionIds.join(',')}` : '/traceability',
  keys: () => '/settings/keys',
  users: () => '/settings/users',
  account: () => '/settings/account',
  traceModel: () => '/settings/trace-model',
  signIn: () => '/sign-in',
};

export interface Crumb {
  href: string;
  label: string;
}

/** Breadcrumbs down to a topic, and on to its records when `records` is set. */
export function topicCrumbs(historyId: string, topicName: string, records = false): Crumb[] {
  return [
    { href: paths.topics(), label: 'Topics' },
    { href: paths.topic(historyId), label: topicName },
    ...(records ? [{ href: paths.records(historyId), label: 'Records' }] : []),
  ];
}
