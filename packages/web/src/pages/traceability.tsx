import { useState } from 'preact/hooks';
import type { SuspectLinkView, TopicSummary, TraceabilityView } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import { MappingField } from '../components/mapping-field';
import { ReviewLinkDialog } from '../components/review-link-dialog';
import { TopicChoices, toggled } from '../components/topic-choices';
import {
  Badge,
  ConfirmDialog,
  EmptyState,
  ErrorNotice,
  Loading,
  Notice,
  PageHeader,
  plural,
} from '../components/ui';
import { downloadFile } from '../download';
import { useAsync, useTitle } from '../hooks';
import { navigate, paths, useLocation } from '../router';
import { useCan } from '../session';
import { approvedTopics } from './export';

type Report = TraceabilityView['report'];
type Rule = Report['rules'][number];

/** A matrix larger than this is listed as links (as the HTML report does). */
const MAX_MATRIX_CELLS = 40_000;
const REPORT_FORMATS = [
  { format: 'html', label: 'HTML' },
  { format: 'xlsx', label: 'XLSX' },
  { format: 'md', label: 'Markdown' },
  { format: 'json', label: 'JSON' },
] as const;

const ruleName = (rule: Rule['rule']) =>
  `${rule.source.name} → ${rule.target.name}${rule.linkType ? ` (${rule.linkType})` : ''}`;

/**
 * Traceability: the coverage of topics taken in order (requirements first), as `rxs trace-report`
 * computes it: a bar per rule, the matrix with the rows not covered marked (and a filter for them),
 * the suspect links with a review button, and the report as a download. The topics are in the URL
 * (`?revisions=A,B`), so a view can be shared and survives a reload.
 */
export function TraceabilityPage() {
  useTitle('Traceability');
  const location = useLocation();
  const can = useCan();
  const chosen = (location.query.get('revisions') ?? '').split(',').filter(Boolean);
  const topics = useAsync(approvedTopics, []);
  const [selected, setSelected] = useState<Set<string>>(() => new Set(chosen));
  const key = chosen.join(',');
  // A mapping file's links are the rules; it is not in the URL (it can be long), so it applies from "Show".
  const [mapping, setMapping] = useState('');
  const [applied, setApplied] = useState('');
  const view = useAsync(
    () =>
      !key
        ? Promise.resolve(undefined)
        : applied.trim()
          ? api.post<TraceabilityView>('/traceability', { revisions: key, mapping: applied })
          : api.get<TraceabilityView>('/traceability', { revisions: key }),
    [key, applied],
  );
  const [onlyUncovered, setOnlyUncovered] = useState(false);
  const [reviewing, setReviewing] = useState<SuspectLinkView>();
  const [message, setMessage] = useState<{ kind: 'success' | 'error'; text: string }>();

  // The order of the V: the topics' order on this page (alphabetical), as ticked.
  const ordered = (topics.data ?? []).map((t) => t.currentRevisionId!).filter((id) => selected.has(id));
  const show = (event: Event) => {
    event.preventDefault();
    setApplied(mapping);
    navigate(`${paths.traceability(ordered)}`);
  };
  const download = async (format: string) => {
    try {
      await downloadFile(
        '/api/traceability/report',
        { revisions: key, format, ...(applied.trim() && { mapping: applied }) },
        `rxs-traceability.${format}`,
      );
    } catch (failure) {
      setMessage({ kind: 'error', text: errorMessage(failure) });
    }
  };

  return (
    <>
      <PageHeader title="Traceability">
        <p class="page-lead">
          Is every record of one topic linked to the next (every requirement verified), which records of the
          next are linked from none, and which links are suspect because a record changed since they were
          reviewed. The same figures as <code>rxs trace-report</code>.
        </p>
      </PageHeader>
      {topics.error !== undefined && <ErrorNotice error={topics.error} onRetry={topics.reload} />}
      {!topics.data && topics.loading && <Loading />}
      {topics.data && (
        <form class="panel" onSubmit={show} data-testid="traceability-topics">
          <p class="muted">
            Tick two or more topics. Each topic is checked against the next one in this list, unless a mapping
            file names a link between them.
          </p>
          <TopicChoices
            topics={topics.data as TopicSummary[]}
            selected={selected}
            onToggle={(id) => setSelected(toggled(selected, id))}
          />
          <MappingField
            value={mapping}
            onValue={setMapping}
            purpose="Its links between two topics (e.g. System Requirements → Verification Tests as verified_by) are the rules, counting only the traces they name, as for rxs trace-report --mapping."
          />
          <div class="button-row">
            <button type="submit" class="button button-primary" disabled={ordered.length < 2}>
              Show coverage
            </button>
            {ordered.length < 2 && <span class="muted">Tick at least two topics.</span>}
          </div>
        </form>
      )}
      {message && (
        <Notice kind={message.kind} onDismiss={() => setMessage(undefined)}>
          {message.text}
        </Notice>
      )}
      {key && view.error !== undefined && <ErrorNotice error={view.error} onRetry={view.reload} />}
      {key && !view.data && view.loading && <Loading label="Reading records and traces…" />}
      {view.data && view.data.report.rules.length === 0 && (
        <EmptyState title="No rule">Tick at least two topics: each is checked against the next.</EmptyState>
      )}
      {view.data && view.data.report.rules.length > 0 && (
        <>
          <section class="panel" aria-labelledby="coverage-title" data-testid="coverage">
            <div class="panel-head">
              <h2 id="coverage-title" class="panel-title">
                Coverage
              </h2>
              <div class="button-row">
                {REPORT_FORMATS.map(({ format, label }) => (
                  <button
                    key={format}
                    type="button"
                    class="button button-small"
                    onClick={() => void download(format)}
                  >
                    Download {label}
                  </button>
                ))}
              </div>
            </div>
            <div class="table-wrap">
              <table class="table table-compact">
                <thead>
                  <tr>
                    <th scope="col">Rule</th>
                    <th scope="col">Coverage</th>
                    <th scope="col">Not linked</th>
                    <th scope="col">Orphans</th>
                    <th scope="col">Suspect links</th>
                  </tr>
                </thead>
                <tbody>
                  {view.data.report.rules.map((r) => (
                    <tr key={ruleName(r.rule)} data-testid="coverage-rule">
                      <td class="wrap">{ruleName(r.rule)}</td>
                      <td>
                        <div
                          class={`coverage-bar${r.percent < 100 ? ' incomplete' : ''}`}
                          role="img"
                          aria-label={`${r.percent.toFixed(1)}% covered`}
                        >
                          <span style={{ width: `${r.percent.toFixed(2)}%` }} />
                        </div>{' '}
                        <strong>{r.percent.toFixed(1)}%</strong>{' '}
                        <span class="muted">
                          ({r.covered} of {r.total})
                        </span>
                      </td>
                      <td>{r.uncovered.length}</td>
                      <td>{r.orphans.length}</td>
                      <td>{r.suspect.length}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </section>
          {view.data.suspect.length > 0 && (
            <section class="panel" aria-labelledby="suspect-title" data-testid="suspect-links">
              <h2 id="suspect-title" class="panel-title">
                Suspect links <Badge kind="warning">{view.data.suspect.length}</Badge>
              </h2>
              <p class="muted">
                A record at either end changed since the link was made or last reviewed. Check that the link
                still holds, then review it.
              </p>
              <ul class="suspect-list">
                {view.data.suspect.map((link) => (
                  <li key={link.traceId}>
                    <span class="wrap">
                      {link.source.readableId} → {link.target.readableId}{' '}
                      <span class="muted">({link.relationTypes.join(', ').replace(/_/g, ' ')})</span>
                    </span>{' '}
                    {can('traces:write') && (
                      <button
                        type="button"
                        class="button button-small"
                        aria-label={`Review ${link.source.readableId} → ${link.target.readableId}`}
                        onClick={() => setReviewing(link)}
                      >
                        Review
                      </button>
                    )}
                  </li>
                ))}
              </ul>
            </section>
          )}
          <label class="checkbox">
            <input
              type="checkbox"
              checked={onlyUncovered}
              onChange={(e) => setOnlyUncovered(e.currentTarget.checked)}
            />
            <span>Only records not covered</span>
          </label>
          {view.data.report.rules.map((r) => (
            <RuleMatrix key={ruleName(r.rule)} rule={r} onlyUncovered={onlyUncovered} />
          ))}
        </>
      )}
      <ReviewLinkDialog
        traceId={reviewing?.traceId}
        onClose={() => setReviewing(undefined)}
        onReviewed={() => {
          setMessage({
            kind: 'success',
            text: `Reviewed the link ${reviewing?.source.readableId} → ${reviewing?.target.readableId}.`,
          });
          view.reload();
        }}
        onFailed={(text) => setMessage({ kind: 'error', text })}
      >
        <p>
          {reviewing?.source.readableId} → {reviewing?.target.readableId}: if the link still holds for both
          records as they are now, confirm. It is no longer suspect.
        </p>
      </ReviewLinkDialog>
    </>
  );
}

/** One rule's matrix: source records against target records, rows not covered marked. */
function RuleMatrix({ rule: r, onlyUncovered }: { rule: Rule; onlyUncovered: boolean }) {
  const uncovered = new Set(r.uncovered);
  const rows = [...new Set([...r.links.map(([s]) => s), ...r.uncovered])]
    .sort()
    .filter((row) => !onlyUncovered || uncovered.has(row));
  const columns = [...new Set([...r.links.map(([, t]) => t), ...r.orphans])].sort();
  const linked = new Set(r.links.map(([s, t]) => `${s}\u0000${t}`));
  const suspect = new Set(r.suspect.map(([s, t]) => `${s}\u0000${t}`));
  const title = ruleName(r.rule);
  return (
    <section class="panel" aria-label={title} data-testid="rule-matrix">
      <h2 class="panel-title wrap">{title}</h2>
      {r.uncovered.length === 0 ? (
        <p>Every record of {r.rule.source.name} is linked.</p>
      ) : (
        <p>
          <strong>{plural(r.uncovered.length, 'record')} not linked</strong>: {r.uncovered.join(', ')}
        </p>
      )}
      {r.orphans.length > 0 && (
        <p>
          Orphans of {r.rule.target.name} ({r.orphans.length}): {r.orphans.join(', ')}
        </p>
      )}
      {rows.length === 0 ? (
        <p class="muted">No row to show.</p>
      ) : rows.length * columns.length > MAX_MATRIX_CELLS ? (
        <p class="muted">
          {rows.length} × {columns.length} is too large to draw; download the report for the list of links.
        </p>
      ) : (
        <div class="table-wrap">
          <table class="table table-compact trace-matrix">
            <thead>
              <tr>
                <th scope="col">
                  {r.rule.source.name} \ {r.rule.target.name}
                </th>
                {columns.map((c) => (
                  <th scope="col" key={c} class="matrix-column">
                    {c}
                  </th>
                ))}
              </tr>
            </thead>
            <tbody>
              {rows.map((row) => (
                <tr key={row} class={uncovered.has(row) ? 'uncovered' : undefined}>
                  <th scope="row">{row}</th>
                  {columns.map((c) => {
                    const pair = `${row}\u0000${c}`;
                    return suspect.has(pair) ? (
                      <td key={c} class="suspect" title="Suspect link">
                        ⚠
                      </td>
                    ) : (
                      <td key={c}>{linked.has(pair) ? '✓' : ''}</td>
                    );
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
