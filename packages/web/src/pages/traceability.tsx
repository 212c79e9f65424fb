import { useState } from 'preact/hooks';
import type { SuspectLinkView, TopicSummary, TraceabilityView } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import { MappingField } from '../components/mapping-field';
import { ReviewLinkDialog } from '../components/review-link-dialog';
import { TopicChoices, toggled } from '../components/topic-choices';
import { TraceabilityCellDialog } from '../components/traceability-cell-dialog';
import { RuleMatrix, ruleName, type MatrixCell } from '../components/traceability-matrix';
import { scopePath, TraceabilityViews, type TraceabilityScope } from '../components/traceability-views';
import { Badge, EmptyState, ErrorNotice, Link, Loading, Notice, PageHeader } from '../components/ui';
import { downloadFile } from '../download';
import { useAsync, useTitle } from '../hooks';
import { navigate, paths, useLocation } from '../router';
import { useCan } from '../session';
import { getTraceModel } from '../trace-model-api';
import { approvedTopics } from './export';
import './traceability.css';

const REPORT_FORMATS = [
  { format: 'html', label: 'HTML' },
  { format: 'xlsx', label: 'XLSX' },
  { format: 'md', label: 'Markdown' },
  { format: 'json', label: 'JSON' },
] as const;

const idsOf = (text: string | null) => (text ?? '').split(',').filter(Boolean);

/**
 * Traceability: the coverage of the tenant's trace model, as `rxs trace-report` computes it: by
 * default its whole V chain, each role a rule; or some of its roles (`?roles=a,b`), or topics taken
 * in order (`?revisions=A,B`, with a mapping file under "advanced"). A bar per rule, the matrix to
 * work in (a covered cell shows its trace, an empty one makes it under the rule's role), the rows
 * not covered marked (and a filter for them), the suspect links with a review button, and the report
 * as a download. What is shown is in the URL, so it can be shared, saved as a view by name, and
 * survives a reload.
 */
export function TraceabilityPage() {
  useTitle('Traceability');
  const location = useLocation();
  const can = useCan();
  const chosen = idsOf(location.query.get('revisions'));
  const chosenRoles = idsOf(location.query.get('roles'));
  const topics = useAsync(approvedTopics, []);
  const model = useAsync(getTraceModel, []);
  const [selected, setSelected] = useState<Set<string>>(() => new Set(chosen));
  const key = chosen.join(',');
  const roleKey = chosenRoles.join(',');
  // A mapping file's links are the rules; it is not in the URL (it can be long), so it applies from "Show".
  const [mapping, setMapping] = useState('');
  const [applied, setApplied] = useState('');
  const [advanced, setAdvanced] = useState(() => key !== '');
  const scope: TraceabilityScope = key ? { revisions: chosen } : roleKey ? { roles: chosenRoles } : {};
  const query: Record<string, string> = key ? { revisions: key } : roleKey ? { roles: roleKey } : {};
  const view = useAsync(
    () =>
      key && applied.trim()
        ? api.post<TraceabilityView>('/traceability', { revisions: key, mapping: applied })
        : api.get<TraceabilityView>('/traceability', query),
    [key, roleKey, applied],
  );
  const [onlyUncovered, setOnlyUncovered] = useState(false);
  const [reviewing, setReviewing] = useState<SuspectLinkView>();
  const [cell, setCell] = useState<MatrixCell>();
  const [message, setMessage] = useState<{ kind: 'success' | 'error'; text: string }>();
  const roles = model.data?.roles ?? [];

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
        { ...query, format, ...(key && applied.trim() && { mapping: applied }) },
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
          reviewed. The same figures as <code>rxs trace-report</code>: by default the whole chain of the trace
          model, in the order of the V, each of its roles a rule.
        </p>
      </PageHeader>
      {model.error !== undefined && <ErrorNotice error={model.error} onRetry={model.reload} />}
      {model.data && (
        <TraceabilityViews
          key={`${key}\u0000${roleKey}`}
          roles={roles}
          shown={scope}
          canWrite={can('traces:write')}
          onOpen={(next) => navigate(scopePath(next))}
          onMessage={(kind, text) => setMessage({ kind, text })}
        />
      )}
      {topics.error !== undefined && <ErrorNotice error={topics.error} onRetry={topics.reload} />}
      {!topics.data && topics.loading && <Loading />}
      {topics.data && (
        <form class="panel" onSubmit={show} data-testid="traceability-topics">
          <h2 class="panel-title">Topics</h2>
          <p class="muted">
            Or tick two or more topics. Each role of the trace model between two of them is a rule; each topic
            is checked against the next one in this list where no role joins them, unless a mapping file names
            a link between them.
          </p>
          <TopicChoices
            topics={topics.data as TopicSummary[]}
            selected={selected}
            onToggle={(id) => setSelected(toggled(selected, id))}
          />
          <details
            class="traceability-advanced"
            open={advanced}
            onToggle={(e) => setAdvanced(e.currentTarget.open)}
          >
            <summary>Advanced: a mapping file instead of the trace model</summary>
            <MappingField
              value={mapping}
              onValue={setMapping}
              purpose="Its links between two topics (e.g. System Requirements → Verification Tests as verified_by) are the rules, counting only the traces they name, as for rxs trace-report --mapping."
            />
          </details>
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
      {view.error !== undefined && <ErrorNotice error={view.error} onRetry={view.reload} />}
      {!view.data && view.loading && <Loading label="Reading records and traces…" />}
      {view.data && view.data.report.rules.length === 0 && (
        <EmptyState title="No rule">
          {key ? (
            'Tick at least two topics: each is checked against the next.'
          ) : (
            <>
              The trace model has no role yet: set it up under{' '}
              <Link href={paths.traceModel()}>Settings → Trace model</Link>, or tick two or more topics.
            </>
          )}
        </EmptyState>
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
          {view.data.report.rules.map((r, index) => {
            const roleId = view.data!.ruleRoles[index];
            return (
              <RuleMatrix
                key={ruleName(r.rule)}
                rule={r}
                role={roles.find((role) => role.id === roleId)}
                records={view.data!.records}
                onlyUncovered={onlyUncovered}
                canMake={can('traces:write')}
                onCell={setCell}
              />
            );
          })}
        </>
      )}
      <TraceabilityCellDialog
        cell={cell}
        onClose={() => setCell(undefined)}
        onMade={(text) => {
          setMessage({ kind: 'success', text });
          view.reload();
        }}
      />
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
