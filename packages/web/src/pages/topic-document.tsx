import type { JSX } from 'preact';
import type { DocumentLink, DocumentRecord, TopicDocument } from '@rxs/web-api';
import { api } from '../api';
import { ErrorNotice, formatDateTime, Link, Loading, Notice, PageHeader, plural } from '../components/ui';
import { useAsync, useTitle } from '../hooks';
import { paths, useLocation } from '../router';
import './topic-document.css';

/**
 * A topic's records as a readable specification, now or as of a moment (`?as_of=`): numbered
 * headings, fields as labelled paragraphs, links by role with suspect marks; printable as it is
 * (topic-document.css holds the print style sheet).
 */
export function TopicDocumentPage({ historyId }: { historyId: string }) {
  const location = useLocation();
  const asOf = location.query.get('as_of') ?? undefined;
  const doc = useAsync(
    () => api.get<TopicDocument>(`/topics/${historyId}/document`, { as_of: asOf }),
    [historyId, asOf],
  );
  useTitle(doc.data ? `${doc.data.name} (document)` : 'Document');
  const crumbs = [
    { href: paths.topics(), label: 'Topics' },
    ...(doc.data ? [{ href: paths.topic(historyId), label: doc.data.name }] : []),
  ];

  if (!doc.data) {
    return (
      <>
        <PageHeader title="Document" crumbs={crumbs} />
        {doc.error ? <ErrorNotice error={doc.error} onRetry={doc.reload} /> : <Loading />}
      </>
    );
  }
  const d = doc.data;
  return (
    <article class="topic-document">
      <PageHeader
        title={d.name}
        crumbs={crumbs}
        actions={
          <button type="button" class="button" onClick={() => window.print()}>
            Print
          </button>
        }
      >
        <p class="document-meta" data-testid="document-meta">
          Revision {d.version ?? d.revisionId} ·{' '}
          {d.asOf ? (
            <>
              as of{' '}
              <time dateTime={d.asOf} title={d.asOf}>
                {formatDateTime(d.asOf)}
              </time>
            </>
          ) : (
            'as it is now'
          )}{' '}
          · {plural(d.total, 'record')}
        </p>
      </PageHeader>
      {d.omitted > 0 && (
        <Notice kind="warning" title="Part of the topic">
          <p>
            This document shows the first {plural(d.records.length, 'record')} of{' '}
            {d.total.toLocaleString('en')}; {plural(d.omitted, 'record')} after them are left out to keep it
            readable. <Link href={paths.exports([d.revisionId])}>Export the topic</Link> for all of them.
          </p>
        </Notice>
      )}
      {d.records.length === 0 ? (
        <p class="muted">This topic has no records{d.asOf ? ' at that moment' : ''}.</p>
      ) : (
        d.records.map((record) => <RecordSection key={record.id} record={record} historyId={historyId} />)
      )}
    </article>
  );
}

/** Heading elements stop at h6; the page title is the h1, so outline level 1 is an h2. */
function headingTag(level: number): keyof JSX.IntrinsicElements {
  return `h${Math.min(level + 1, 6)}` as keyof JSX.IntrinsicElements;
}

function RecordSection({ record, historyId }: { record: DocumentRecord; historyId: string }) {
  const Heading = headingTag(record.level);
  return (
    <section class="document-record" data-testid="document-record">
      <Heading class="document-heading" {...(record.level > 5 ? { 'aria-level': record.level + 1 } : {})}>
        <span class="document-number">{record.number}</span>{' '}
        {record.readableId && <span class="document-readable-id">{record.readableId}</span>}{' '}
        <Link href={paths.record(historyId, record.id)} class="document-title">
          {record.title}
        </Link>
      </Heading>
      {record.fields.map((field, index) => (
        <p key={index} class="document-field">
          <strong>{field.label}:</strong> <span class="document-value">{field.text}</span>
        </p>
      ))}
      {record.links.length > 0 && (
        <ul class="document-links" aria-label={`Links of ${record.readableId ?? record.title}`}>
          {record.links.map((link, index) => (
            <LinkLine key={index} link={link} />
          ))}
        </ul>
      )}
    </section>
  );
}

function LinkLine({ link }: { link: DocumentLink }) {
  const label = link.readableId ?? link.title ?? link.recordId;
  return (
    <li>
      {link.name}{' '}
      {link.historyId ? (
        <Link href={paths.record(link.historyId, link.recordId)} class="document-link-id">
          {label}
        </Link>
      ) : (
        <span class="document-link-id">{label}</span>
      )}
      {link.readableId && link.title && <> — {link.title}</>}
      {link.suspect && (
        <>
          {' '}
          <span class="document-suspect" title="A record at either end changed since this link was reviewed">
            suspect
          </span>
        </>
      )}
    </li>
  );
}
