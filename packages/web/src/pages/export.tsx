import { useState } from 'preact/hooks';
import type { DocumentDownloadFormat, ExportFormat, TopicList, TopicSummary } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import { ExportResultNotice, type ExportResult } from '../components/export-result';
import { MappingField } from '../components/mapping-field';
import { TopicChoices, toggled } from '../components/topic-choices';
import { downloadExport } from '../download';
import { EmptyState, ErrorNotice, Link, Loading, PageHeader, plural } from '../components/ui';
import { useAsync, useTitle } from '../hooks';
import { paths, useLocation } from '../router';
import { useSession } from '../session';

const FORMAT_NOTES: Record<ExportFormat, string> = {
  csv: 'One row per record, one column per semantic name. Opens in any spreadsheet.',
  xlsx: 'An Excel workbook: a sheet per topic, and the traces on their own sheet.',
  reqif: 'ReqIF XML, the exchange format of requirements tools (DOORS, Polarion, Jama…).',
  reqifz: 'The same ReqIF file in a zip archive (.reqifz), as requirements tools exchange it.',
  needs: 'needs.json for Sphinx-Needs documentation projects.',
  json: 'The complete export as one JSON document, with fields and traces.',
  jsonl: 'One JSON object per line, for streaming into other tools.',
};

/** Documents for people, beside the data formats: always with the traces, values by their labels. */
const DOCUMENT_CHOICES: { format: DocumentDownloadFormat; label: string; note: string }[] = [
  {
    format: 'docx',
    label: 'Word document (DOCX)',
    note: 'A document for review: each record with its fields and links, the trace matrices, coverage and the changes since the latest released baseline.',
  },
  {
    format: 'pdf',
    label: 'PDF document',
    note: 'The same document as a PDF, marked NOT RELEASED on every page.',
  },
];

/** Every approved topic, across pages. */
export async function approvedTopics(): Promise<TopicSummary[]> {
  const topics: TopicSummary[] = [];
  let after: string | null = null;
  do {
    const page: TopicList = await api.get<TopicList>('/topics', { after });
    topics.push(...page.items);
    after = page.next;
  } while (after);
  return topics.filter((t) => t.currentRevisionId).sort((a, b) => a.name.localeCompare(b.name));
}

export function ExportPage() {
  useTitle('Export');
  const { meta, info } = useSession();
  const location = useLocation();
  const topics = useAsync(approvedTopics, []);
  const [selected, setSelected] = useState<Set<string>>(
    () => new Set((location.query.get('revisions') ?? '').split(',').filter(Boolean)),
  );
  const [format, setFormat] = useState<ExportFormat | DocumentDownloadFormat>('csv');
  const [traces, setTraces] = useState(true);
  const [labels, setLabels] = useState(false);
  // Links named by relation type alone, as before trace models (the default names them by role).
  const [byRelationType, setByRelationType] = useState(false);
  // A mapping file's text (uploaded or pasted): need types, id prefixes, link names (docs/mapping.md).
  const [mapping, setMapping] = useState('');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<ExportResult>();
  const canTraces = info.permissions.includes('traces:read');
  const isDocument = DOCUMENT_CHOICES.some((choice) => choice.format === format);
  const choices = [
    ...meta.exportFormats.map((option) => ({ ...option, note: FORMAT_NOTES[option.format] })),
    // A document shows the links: it needs traces:read.
    ...(canTraces ? DOCUMENT_CHOICES : []),
  ];

  const toggle = (revisionId: string) => setSelected(toggled(selected, revisionId));

  const download = async (event: Event) => {
    event.preventDefault();
    const available = new Set((topics.data ?? []).map((t) => t.currentRevisionId));
    const revisions = [...selected].filter((id) => available.has(id));
    if (revisions.length === 0) return;
    setBusy(true);
    setResult(undefined);
    try {
      const { name, size, warnings } = await downloadExport({
        revisions: revisions.join(','),
        format,
        traces: traces && canTraces,
        labels,
        mapping,
        ...(byRelationType && { links_by: 'relation-type' as const }),
      });
      setResult({ kind: 'success', text: `Downloaded ${name} (${(size / 1024).toFixed(1)} KiB).`, warnings });
    } catch (error) {
      setResult({ kind: 'error', text: errorMessage(error) });
    } finally {
      setBusy(false);
    }
  };

  const count = [...selected].filter((id) =>
    (topics.data ?? []).some((t) => t.currentRevisionId === id),
  ).length;

  return (
    <>
      <PageHeader title="Export">
        <p class="page-lead">
          A snapshot of the current revision of each topic, mapped to semantic names and written by the same
          code as <code>rxs export</code>.
        </p>
      </PageHeader>
      {topics.error !== undefined && <ErrorNotice error={topics.error} onRetry={topics.reload} />}
      {!topics.data && topics.loading && <Loading />}
      {topics.data && topics.data.length === 0 && (
        <EmptyState
          title="Nothing to export yet"
          action={
            <Link class="button" href={paths.topics()}>
              Go to the topics
            </Link>
          }
        >
          Only approved topics can be exported.
        </EmptyState>
      )}
      {topics.data && topics.data.length > 0 && (
        <form class="export-form" onSubmit={download}>
          <fieldset class="panel">
            <legend class="panel-title">Topics</legend>
            <div class="button-row">
              <button
                type="button"
                class="button button-small button-ghost"
                onClick={() => setSelected(new Set(topics.data!.map((t) => t.currentRevisionId!)))}
              >
                Select all
              </button>
              <button
                type="button"
                class="button button-small button-ghost"
                onClick={() => setSelected(new Set())}
              >
                Select none
              </button>
            </div>
            <TopicChoices topics={topics.data} selected={selected} onToggle={toggle} />
          </fieldset>
          <fieldset class="panel">
            <legend class="panel-title">Format</legend>
            <div class="format-grid">
              {choices.map((option) => (
                <label
                  key={option.format}
                  class={`format-option${format === option.format ? ' selected' : ''}`}
                >
                  <input
                    type="radio"
                    name="format"
                    value={option.format}
                    checked={format === option.format}
                    onChange={() => setFormat(option.format)}
                  />
                  <span>
                    <strong>{option.label}</strong>
                    <span class="format-note">{option.note}</span>
                  </span>
                </label>
              ))}
            </div>
          </fieldset>
          <fieldset class="panel">
            <legend class="panel-title">Options</legend>
            <label class="checkbox">
              <input
                type="checkbox"
                checked={(traces || isDocument) && canTraces}
                disabled={!canTraces || isDocument}
                onChange={(e) => setTraces(e.currentTarget.checked)}
              />
              Include the traces between the records
            </label>
            <label class="checkbox">
              <input
                type="checkbox"
                checked={byRelationType}
                disabled={!(traces && canTraces)}
                onChange={(e) => setByRelationType(e.currentTarget.checked)}
              />
              Name the links by their relation types only, not by the roles of the trace model
            </label>
            <label class="checkbox">
              <input
                type="checkbox"
                checked={labels || isDocument}
                disabled={isDocument}
                onChange={(e) => setLabels(e.currentTarget.checked)}
              />
              Write the labels of select, radio and checklist options instead of their stored values
            </label>
          </fieldset>
          <MappingField
            value={mapping}
            onValue={setMapping}
            purpose="Need types, id prefixes, ReqIF types, title/description/status fields, identifier rules and link names per topic, as for rxs export --mapping."
          />
          <ExportResultNotice result={result} />
          <div class="button-row">
            <button type="submit" class="button button-primary" disabled={busy || count === 0}>
              {busy
                ? isDocument
                  ? 'Writing the document…'
                  : 'Exporting…'
                : count === 0
                  ? 'Choose a topic'
                  : `Download ${plural(count, 'topic')}`}
            </button>
          </div>
        </form>
      )}
    </>
  );
}
