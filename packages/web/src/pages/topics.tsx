import { useState } from 'preact/hooks';
import type { TopicList, TopicSummary } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import {
  Badge,
  CopyButton,
  DateTime,
  EmptyState,
  ErrorNotice,
  Link,
  Loading,
  PageHeader,
} from '../components/ui';
import { useAsync, useDebounced, useTitle } from '../hooks';
import { navigate, paths, useLocation } from '../router';
import { useCan } from '../session';

export function TopicsPage() {
  useTitle('Knowledge topics');
  const can = useCan();
  const location = useLocation();
  const [search, setSearch] = useState(location.query.get('q') ?? '');
  const query = useDebounced(search.trim(), 250);
  const [more, setMore] = useState<{ items: TopicSummary[]; next: string | null; error?: string }>();

  const list = useAsync(async () => {
    setMore(undefined);
    // Keep the search in the address, so reload and back show the same list.
    navigate(query ? `${paths.topics()}?q=${encodeURIComponent(query)}` : paths.topics(), { replace: true });
    return api.get<TopicList>('/topics', { q: query });
  }, [query]);

  const items = [...(list.data?.items ?? []), ...(more?.items ?? [])];
  const next = more ? more.next : (list.data?.next ?? null);
  const loadMore = async () => {
    if (!next) return;
    try {
      const page = await api.get<TopicList>('/topics', { q: query, after: next });
      setMore({ items: [...(more?.items ?? []), ...page.items], next: page.next });
    } catch (error) {
      setMore({ items: more?.items ?? [], next, error: errorMessage(error) });
    }
  };

  return (
    <>
      <PageHeader
        title="Knowledge topics"
        actions={
          <>
            <Link class="button" href={paths.baselines()}>
              Baselines
            </Link>
            {can('kt:write') && (
              <Link class="button button-primary" href={paths.newTopic()}>
                New topic
              </Link>
            )}
          </>
        }
      >
        <p class="page-lead">
          Each topic has a form and the records filled in with it. Open a topic for its ids, its revision
          history and its records.
        </p>
      </PageHeader>
      <div class="toolbar">
        <label class="search">
          <span class="visually-hidden">Search topics by name</span>
          <input
            type="search"
            placeholder="Search topics by name"
            value={search}
            onInput={(e) => setSearch(e.currentTarget.value)}
          />
        </label>
        {list.data && (
          <span class="muted" role="status">
            {items.length === 1 ? '1 topic' : `${items.length} topics`}
            {next ? ' shown' : ''}
          </span>
        )}
      </div>
      {list.error !== undefined && <ErrorNotice error={list.error} onRetry={list.reload} />}
      {list.loading && !list.data && <Loading />}
      {list.data && items.length === 0 && (
        <EmptyState
          title={query ? `No topic matches “${query}”` : 'No knowledge topics yet'}
          action={
            !query &&
            can('kt:write') && (
              <Link class="button button-primary" href={paths.newTopic()}>
                Create the first topic
              </Link>
            )
          }
        >
          {query
            ? 'Try another part of the name.'
            : can('kt:write')
              ? 'A topic holds a form designed in the form editor and the records filled in with it.'
              : 'Topics appear here once an editor creates them.'}
        </EmptyState>
      )}
      {items.length > 0 && (
        <div class="table-wrap">
          <table class="table">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Status</th>
                <th scope="col" class="num">
                  Records
                </th>
                <th scope="col">Current revision id</th>
                <th scope="col">Last change</th>
              </tr>
            </thead>
            <tbody>
              {items.map((topic) => (
                <tr key={topic.historyId}>
                  <td>
                    <Link href={paths.topic(topic.historyId)} class="strong-link">
                      {topic.name}
                    </Link>
                    <div class="cell-sub">
                      {topic.type === 'single_record' ? 'Single record' : 'Multi record'}
                    </div>
                  </td>
                  <td>
                    {topic.currentRevisionId ? (
                      <Badge kind="success">Approved v{topic.currentVersion}</Badge>
                    ) : (
                      <Badge kind="warning">Not approved</Badge>
                    )}{' '}
                    {topic.draftRevisionId && topic.currentRevisionId && (
                      <Badge kind="info">Draft open</Badge>
                    )}
                  </td>
                  <td class="num">
                    {topic.currentRevisionId ? (
                      <Link href={paths.records(topic.historyId)}>
                        {topic.recordCount.toLocaleString('en')}
                      </Link>
                    ) : (
                      '—'
                    )}
                  </td>
                  <td>
                    {topic.currentRevisionId ? (
                      <span class="id-inline">
                        <code>{topic.currentRevisionId}</code>
                        <CopyButton text={topic.currentRevisionId} />
                      </span>
                    ) : (
                      <span class="muted">Approve the draft first</span>
                    )}
                  </td>
                  <td>
                    <DateTime value={topic.updatedAt} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {more?.error && <ErrorNotice error={more.error} />}
      {next && (
        <div class="load-more">
          <button type="button" class="button" onClick={() => void loadMore()}>
            Show more topics
          </button>
        </div>
      )}
    </>
  );
}
