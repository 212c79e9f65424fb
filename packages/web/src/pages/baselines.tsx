import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import type {
  ApprovalMeaning,
  BaselineComparison,
  BaselineList,
  BaselineSignerChoices,
  BaselineSignerView,
  BaselineView,
  DocumentDownloadFormat,
  ExportFormat,
  TopicComparison,
} from '@rxs/web-api';
import { api, errorMessage, fieldErrorsOf } from '../api';
import {
  Badge,
  DateTime,
  EmptyState,
  ErrorNotice,
  Field,
  formatDateTime,
  Link,
  Loading,
  Notice,
  PageHeader,
  plural,
} from '../components/ui';
import { ExportResultNotice, type ExportResult } from '../components/export-result';
import { MEANING_LABELS } from '../components/approve-dialog';
import { BaselineDecisionDialog, type BaselineDecision } from '../components/baseline-decision-dialog';
import { TopicChoices, toggled } from '../components/topic-choices';
import { ReasonField } from '../components/reason-field';
import { downloadExport, downloadFile } from '../download';
import { useAsync, useTitle } from '../hooks';
import { paths, useLocation } from '../router';
import { useCan, useSession } from '../session';
import { approvedTopics } from './export';
import { ChangesTable } from './record-history';
import './baselines.css';

/** Every baseline of the tenant, across pages. */
async function allBaselines(): Promise<BaselineView[]> {
  const baselines: BaselineView[] = [];
  let after: string | null = null;
  do {
    const page: BaselineList = await api.get<BaselineList>('/baselines', { after });
    baselines.push(...page.items);
    after = page.next;
  } while (after);
  return baselines.sort((a, b) => b.at.localeCompare(a.at));
}

/** A `datetime-local` value (the viewer's local time) as ISO 8601 UTC; empty: now. */
function localToIso(value: string): string | undefined {
  if (!value) return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : date.toISOString();
}

/** The tenant's users a proposal may ask to sign. */
async function signerChoices(): Promise<BaselineSignerChoices['users']> {
  return (await api.get<BaselineSignerChoices>('/baselines/signers')).users;
}

/**
 * Baselines: named moments over some topics, to export again exactly and to compare. A baseline
 * proposed for review is released when each of its signers has signed, or ends at one refusal.
 */
export function BaselinesPage() {
  useTitle('Baselines');
  const can = useCan();
  const list = useAsync(allBaselines, []);
  const [created, setCreated] = useState<BaselineView>();
  const [decided, setDecided] = useState<BaselineView>();

  return (
    <>
      <PageHeader title="Baselines" crumbs={[{ href: paths.topics(), label: 'Topics' }]}>
        <p class="page-lead">
          A baseline names a moment over some topics, such as a release. It never changes: its export is the
          export that was taken at that moment, byte for byte, and two baselines can be compared record by
          record.
        </p>
      </PageHeader>
      {created && (
        <Notice
          kind="success"
          title={created.status === 'proposed' ? 'Baseline proposed' : 'Baseline created'}
          onDismiss={() => setCreated(undefined)}
        >
          “{created.name}” names {plural(created.topics.length, 'topic')} as of{' '}
          <DateTime value={created.at} />
          {created.status === 'proposed' ? '; it is released once all its signers have signed.' : '.'}
        </Notice>
      )}
      {decided && (
        <Notice kind="success" title={decidedTitle(decided)} onDismiss={() => setDecided(undefined)}>
          {decided.status === 'released' && (
            <>
              “{decided.name}” was released <DateTime value={decided.releasedAt} />.
            </>
          )}
          {decided.status === 'proposed' && (
            <>
              “{decided.name}” waits for {plural(waitingFor(decided), 'more signature')}.
            </>
          )}
          {decided.status === 'refused' && <>“{decided.name}” is refused; a new proposal can supersede it.</>}
        </Notice>
      )}
      {can('kt:write') && (
        <CreateBaseline
          baselines={list.data ?? []}
          onCreated={(baseline) => {
            setCreated(baseline);
            list.reload();
          }}
        />
      )}
      {list.error !== undefined && <ErrorNotice error={list.error} onRetry={list.reload} />}
      {!list.data && list.loading && <Loading />}
      {list.data && list.data.length === 0 && (
        <EmptyState title="No baselines yet">
          {can('kt:write') ? 'Create the first one above.' : 'An editor can create one.'}
        </EmptyState>
      )}
      {list.data && list.data.length > 0 && (
        <>
          <BaselineTable
            baselines={list.data}
            onDecided={(baseline) => {
              setDecided(baseline);
              list.reload();
            }}
            onOutdated={list.reload}
          />
          <CompareBaselines baselines={list.data} />
        </>
      )}
    </>
  );
}

function decidedTitle(baseline: BaselineView): string {
  if (baseline.status === 'released') return 'Signed: the baseline is released';
  if (baseline.status === 'refused') return 'Refused';
  return 'Signed';
}

function waitingFor(baseline: BaselineView): number {
  return baseline.signers.filter((signer) => signer.state === 'waiting').length;
}

/** A signer the proposal will ask for, with the meaning asked of them. */
interface ChosenSigner {
  userId: string;
  email: string;
  meaning: ApprovalMeaning;
}

function CreateBaseline({
  baselines,
  onCreated,
}: {
  /** The baselines a new one may supersede. */
  baselines: BaselineView[];
  onCreated: (baseline: BaselineView) => void;
}) {
  const location = useLocation();
  const topics = useAsync(approvedTopics, []);
  const preselected = location.query.get('topic');
  const [name, setName] = useState('');
  const [description, setDescription] = useState('');
  const [at, setAt] = useState('');
  const [chosen, setChosen] = useState<Set<string>>();
  const [signers, setSigners] = useState<ChosenSigner[]>([]);
  const [supersedes, setSupersedes] = useState('');
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [failure, setFailure] = useState<string>();

  // The topic the page was opened from is ticked until the user chooses.
  const selected =
    chosen ??
    new Set((topics.data ?? []).filter((t) => t.historyId === preselected).map((t) => t.currentRevisionId!));

  const toggle = (revisionId: string) => setChosen(toggled(selected, revisionId));

  const submit = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    setErrors({});
    setFailure(undefined);
    try {
      const baseline = await api.post<BaselineView>('/baselines', {
        name: name.trim(),
        description: description.trim() || undefined,
        knowledge_topic_revision_ids: [...selected],
        at: localToIso(at),
        signers:
          signers.length > 0 ? signers.map((s) => ({ user: s.userId, meaning: s.meaning })) : undefined,
        supersedes: supersedes || undefined,
      });
      setName('');
      setDescription('');
      setAt('');
      setChosen(new Set());
      setSigners([]);
      setSupersedes('');
      onCreated(baseline);
    } catch (error) {
      const fields = fieldErrorsOf(error);
      setErrors(fields);
      if (Object.keys(fields).length === 0) setFailure(errorMessage(error));
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      class="panel"
      onSubmit={(event) => void submit(event)}
      noValidate
      aria-labelledby="new-baseline-title"
    >
      <h2 id="new-baseline-title" class="panel-title">
        New baseline
      </h2>
      {failure && (
        <Notice kind="error" title="The baseline was not created">
          {failure}
        </Notice>
      )}
      <div class="form-grid">
        <Field
          label="Name"
          id="baseline-name"
          error={errors.name}
          hint="Unique, e.g. v1.0 or Release 2026-11."
        >
          <input
            id="baseline-name"
            value={name}
            maxLength={200}
            onInput={(e) => setName(e.currentTarget.value)}
          />
        </Field>
        <Field
          label="Moment (optional)"
          id="baseline-at"
          error={errors.at}
          hint="Your local time; empty: now. A past moment names the topics as they were then."
        >
          <input
            id="baseline-at"
            type="datetime-local"
            step={1}
            value={at}
            onInput={(e) => setAt(e.currentTarget.value)}
          />
        </Field>
      </div>
      <ReasonField
        id="baseline-description"
        label="Description (optional)"
        value={description}
        onValue={setDescription}
        error={errors.description}
        hint="What the baseline is for, e.g. the release or audit."
      />
      <fieldset class="baseline-topics">
        <legend>Topics (their current revisions)</legend>
        {errors.knowledge_topic_revision_ids && (
          <div class="field-error" role="alert">
            {errors.knowledge_topic_revision_ids}
          </div>
        )}
        {topics.error !== undefined && <ErrorNotice error={topics.error} onRetry={topics.reload} />}
        {!topics.data && topics.loading && <Loading />}
        {topics.data && topics.data.length === 0 && <p class="muted">No topic is approved yet.</p>}
        <TopicChoices topics={topics.data ?? []} selected={selected} onToggle={toggle} />
      </fieldset>
      <SignerChoice signers={signers} onSigners={setSigners} error={errors.signers} />
      {baselines.length > 0 && (
        <Field
          label="Supersedes (optional)"
          id="baseline-supersedes"
          error={errors.supersedes}
          hint="An earlier baseline this one replaces, e.g. a refused proposal; the earlier one stays as it is."
        >
          <select
            id="baseline-supersedes"
            value={supersedes}
            onChange={(e) => setSupersedes(e.currentTarget.value)}
          >
            <option value="">None</option>
            {baselines.map((b) => (
              <option key={b.id} value={b.id}>
                {b.name} ({STATUS_LABELS[b.status].toLowerCase()})
              </option>
            ))}
          </select>
        </Field>
      )}
      <div class="button-row">
        <button
          type="submit"
          class="button button-primary"
          disabled={busy || selected.size === 0 || !name.trim()}
        >
          {busy
            ? signers.length > 0
              ? 'Proposing…'
              : 'Creating…'
            : signers.length > 0
              ? 'Propose for review'
              : 'Create baseline'}
        </button>
        <span class="muted small">
          {signers.length > 0
            ? 'Proposed: released when every signer has signed, ended by one refusal.'
            : 'Without signers the baseline is released at once.'}
        </span>
      </div>
    </form>
  );
}

/**
 * The signers a proposal asks for: a user of the tenant and the meaning asked of them, added one
 * at a time. Only owners and admins may be asked for `approved`; anyone for `reviewed`.
 */
function SignerChoice({
  signers,
  onSigners,
  error,
}: {
  signers: ChosenSigner[];
  onSigners: (signers: ChosenSigner[]) => void;
  error?: string;
}) {
  const users = useAsync(signerChoices, []);
  const [userId, setUserId] = useState('');
  const [meaning, setMeaning] = useState<ApprovalMeaning>('approved');
  const available = (users.data ?? []).filter((u) => !signers.some((s) => s.userId === u.id));
  const user = available.find((u) => u.id === userId) ?? available[0];
  const meaningAllowed = user !== undefined && (meaning === 'reviewed' || user.mayApprove);

  const add = () => {
    if (!user || !meaningAllowed) return;
    onSigners([...signers, { userId: user.id, email: user.email, meaning }]);
    setUserId('');
  };

  return (
    <fieldset class="baseline-signers">
      <legend>Signers (to propose for review)</legend>
      {error && (
        <div class="field-error" role="alert">
          {error}
        </div>
      )}
      {users.error !== undefined && <ErrorNotice error={users.error} onRetry={users.reload} />}
      {signers.length > 0 && (
        <ul class="signer-list" data-testid="chosen-signers">
          {signers.map((signer) => (
            <li key={signer.userId}>
              {signer.email} <Badge kind="info">{MEANING_LABELS[signer.meaning]}</Badge>{' '}
              <button
                type="button"
                class="button button-small"
                aria-label={`Remove ${signer.email} from the signers`}
                onClick={() => onSigners(signers.filter((s) => s.userId !== signer.userId))}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      {available.length > 0 && (
        <div class="compare-form">
          <label class="inline-field">
            <span>User</span>
            <select
              id="baseline-signer-user"
              value={user?.id}
              onChange={(e) => setUserId(e.currentTarget.value)}
            >
              {available.map((u) => (
                <option key={u.id} value={u.id}>
                  {u.email} ({u.role})
                </option>
              ))}
            </select>
          </label>
          <label class="inline-field">
            <span>Signs as</span>
            <select
              id="baseline-signer-meaning"
              value={meaning}
              onChange={(e) => setMeaning(e.currentTarget.value as ApprovalMeaning)}
            >
              <option value="approved">{MEANING_LABELS.approved}</option>
              <option value="reviewed">{MEANING_LABELS.reviewed}</option>
            </select>
          </label>
          <button type="button" class="button" disabled={!meaningAllowed} onClick={add}>
            Add signer
          </button>
        </div>
      )}
      {user && !meaningAllowed && (
        <p class="muted small">
          {user.email} is an {user.role}: only owners and admins may sign as Approved.
        </p>
      )}
    </fieldset>
  );
}

const STATUS_LABELS = { proposed: 'Proposed', released: 'Released', refused: 'Refused' } as const;
const STATUS_BADGES = { proposed: 'warning', released: 'success', refused: 'danger' } as const;

/** A baseline's status, when it was released, and the baseline it supersedes. */
function BaselineStatus({ baseline }: { baseline: BaselineView }) {
  return (
    <>
      <Badge kind={STATUS_BADGES[baseline.status]}>{STATUS_LABELS[baseline.status]}</Badge>
      {baseline.releasedAt && (
        <div class="cell-sub">
          <DateTime value={baseline.releasedAt} />
        </div>
      )}
      {baseline.supersedes && <div class="cell-sub">Supersedes {baseline.supersedes.name}</div>}
    </>
  );
}

/** One required signer: the meaning asked, and signed (when, why), refused (why) or waiting. */
function SignerState({ signer }: { signer: BaselineSignerView }) {
  return (
    <li>
      {signer.email} <span class="muted">({MEANING_LABELS[signer.meaning].toLowerCase()})</span>:{' '}
      {signer.state === 'signed' && (
        <>
          signed <DateTime value={signer.at} />
        </>
      )}
      {signer.state === 'refused' && (
        <>
          refused <DateTime value={signer.at} />
        </>
      )}
      {signer.state === 'waiting' && <span class="muted">waiting</span>}
      {signer.reason && <div class="cell-sub">“{signer.reason}”</div>}
    </li>
  );
}

/** The documents a baseline downloads as; the label names the button ("Download PDF"). */
const DOCUMENT_BUTTONS: { format: DocumentDownloadFormat; label: string }[] = [
  { format: 'pdf', label: 'PDF' },
  { format: 'docx', label: 'Word' },
];

function BaselineTable({
  baselines,
  onDecided,
  onOutdated,
}: {
  baselines: BaselineView[];
  onDecided: (baseline: BaselineView) => void;
  /** Reads the baselines again: one changed since the page read them. */
  onOutdated: () => void;
}) {
  const { meta, info } = useSession();
  const [format, setFormat] = useState<ExportFormat>('csv');
  const [busy, setBusy] = useState<string>();
  const [result, setResult] = useState<ExportResult>();
  const [deciding, setDeciding] = useState<{ baseline: BaselineView; decision: BaselineDecision }>();
  const canTraces = info.permissions.includes('traces:read');
  /** What the signed-in user is asked to sign on a baseline still proposed, if anything. */
  const askedOf = (baseline: BaselineView) =>
    baseline.status === 'proposed'
      ? baseline.signers.find((s) => s.userId === info.user.id && s.state === 'waiting')
      : undefined;

  const download = async (baseline: BaselineView) => {
    setBusy(baseline.id);
    setResult(undefined);
    try {
      const { name, size, warnings } = await downloadExport({
        revisions: baseline.topics.map((t) => t.revisionId).join(','),
        format,
        traces: canTraces,
        labels: false,
        as_of: baseline.at,
      });
      setResult({
        kind: 'success',
        text: `Downloaded ${name} (${(size / 1024).toFixed(1)} KiB), as of ${formatDateTime(baseline.at)}.`,
        warnings,
      });
    } catch (error) {
      setResult({ kind: 'error', text: errorMessage(error) });
    } finally {
      setBusy(undefined);
    }
  };

  /** The baseline as a document (its records, signatures and changes since the previous released one). */
  const downloadDocument = async (baseline: BaselineView, document: DocumentDownloadFormat) => {
    setBusy(`${baseline.id}/${document}`);
    setResult(undefined);
    try {
      const { name, size } = await downloadFile(
        `/api/baselines/${baseline.id}/document`,
        { format: document },
        `rxs-baseline.${document}`,
      );
      setResult({ kind: 'success', text: `Downloaded ${name} (${(size / 1024).toFixed(1)} KiB).` });
    } catch (error) {
      setResult({ kind: 'error', text: errorMessage(error) });
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <section class="panel" aria-labelledby="baselines-title">
      <div class="panel-head">
        <h2 id="baselines-title" class="panel-title">
          Baselines
        </h2>
        <label class="inline-field">
          <span>Export format</span>
          <select
            id="baseline-format"
            value={format}
            onChange={(e) => setFormat(e.currentTarget.value as ExportFormat)}
          >
            {meta.exportFormats.map((option) => (
              <option key={option.format} value={option.format}>
                {option.label}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ExportResultNotice result={result} />
      <div class="table-wrap">
        <table class="table" data-testid="baselines-table">
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Status</th>
              <th scope="col">Moment</th>
              <th scope="col">Topics</th>
              <th scope="col">Signers</th>
              <th scope="col">Created by</th>
              <th scope="col" class="actions">
                <span class="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {baselines.map((baseline) => (
              <tr key={baseline.id}>
                <th scope="row">
                  {baseline.name}
                  {baseline.description && <div class="cell-sub">{baseline.description}</div>}
                </th>
                <td>
                  <BaselineStatus baseline={baseline} />
                </td>
                <td>
                  <DateTime value={baseline.at} />
                </td>
                <td>
                  {baseline.topics.map((topic) => (
                    <div key={topic.revisionId} class="baseline-topic">
                      {topic.name} {topic.version && <span class="muted">v{topic.version}</span>}{' '}
                      {topic.historyId && (
                        <Link
                          href={paths.topicDocument(topic.historyId, baseline.at)}
                          aria-label={`Document of ${topic.name} at ${baseline.name}`}
                        >
                          Document
                        </Link>
                      )}
                    </div>
                  ))}
                </td>
                <td>
                  {baseline.signers.length === 0 ? (
                    <span class="muted">None: released when made</span>
                  ) : (
                    <ul class="signer-list">
                      {baseline.signers.map((signer) => (
                        <SignerState key={signer.userId} signer={signer} />
                      ))}
                    </ul>
                  )}
                </td>
                <td>
                  {baseline.createdBy}
                  <div class="cell-sub">
                    <DateTime value={baseline.createdAt} />
                  </div>
                </td>
                <td class="actions">
                  <button
                    type="button"
                    class="button button-small"
                    disabled={busy !== undefined}
                    aria-label={`Download ${baseline.name}`}
                    onClick={() => void download(baseline)}
                  >
                    {busy === baseline.id ? 'Exporting…' : 'Download'}
                  </button>
                  {canTraces &&
                    DOCUMENT_BUTTONS.map(({ format: document, label }) => (
                      <Fragment key={document}>
                        {' '}
                        <button
                          type="button"
                          class="button button-small"
                          disabled={busy !== undefined}
                          aria-busy={busy === `${baseline.id}/${document}`}
                          aria-label={`Download ${label} of ${baseline.name}`}
                          onClick={() => void downloadDocument(baseline, document)}
                        >
                          {busy === `${baseline.id}/${document}` ? 'Writing…' : `Download ${label}`}
                        </button>
                      </Fragment>
                    ))}
                  {askedOf(baseline) && (
                    <>
                      {' '}
                      <button
                        type="button"
                        class="button button-small button-primary"
                        aria-label={`Sign ${baseline.name}`}
                        onClick={() =>
                          setDeciding({
                            baseline,
                            decision: { kind: 'sign', meaning: askedOf(baseline)!.meaning },
                          })
                        }
                      >
                        Sign
                      </button>{' '}
                      <button
                        type="button"
                        class="button button-small button-danger"
                        aria-label={`Refuse ${baseline.name}`}
                        onClick={() => setDeciding({ baseline, decision: { kind: 'refuse' } })}
                      >
                        Refuse
                      </button>
                    </>
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <BaselineDecisionDialog
        baseline={deciding?.baseline}
        decision={deciding?.decision ?? { kind: 'refuse' }}
        onCancel={() => setDeciding(undefined)}
        onOutdated={onOutdated}
        onDecided={(baseline) => {
          setDeciding(undefined);
          onDecided(baseline);
        }}
      />
    </section>
  );
}

function CompareBaselines({ baselines }: { baselines: BaselineView[] }) {
  const [from, setFrom] = useState(baselines[baselines.length > 1 ? 1 : 0]!.id);
  const [to, setTo] = useState(baselines.length > 1 ? baselines[0]!.id : 'now');
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<BaselineComparison>();
  const [error, setError] = useState<unknown>();

  /** One page of a comparison: `offset` differences skipped (the `next` of the page before). */
  const load = async (pair: { from: string; to: string }, offset: number) => {
    setBusy(true);
    setError(undefined);
    try {
      setResult(await api.get<BaselineComparison>('/baselines/compare', { ...pair, offset }));
    } catch (failure) {
      setResult(undefined);
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  const compare = (event: Event) => {
    event.preventDefault();
    void load({ from, to }, 0);
  };
  // Other pages are of the comparison shown, whatever the selects say now.
  const shown = result && { from: result.from.id, to: result.to.id ?? 'now' };

  return (
    <section class="panel" aria-labelledby="compare-title">
      <h2 id="compare-title" class="panel-title">
        Compare
      </h2>
      <form class="compare-form" onSubmit={compare}>
        <BaselineSelect id="compare-from" label="From" baselines={baselines} value={from} onValue={setFrom} />
        <BaselineSelect id="compare-to" label="To" baselines={baselines} value={to} onValue={setTo} withNow />
        <button type="submit" class="button button-primary" disabled={busy}>
          {busy ? 'Comparing…' : 'Compare'}
        </button>
      </form>
      {error !== undefined && <ErrorNotice error={error} />}
      {result && (
        <div data-testid="comparison">
          <p class="muted">
            From “{result.from.name}” (<DateTime value={result.from.at} />) to “{result.to.name}” (
            <DateTime value={result.to.at} />
            ).
          </p>
          {result.topics.map((topic) => (
            <TopicComparisonView key={topic.historyId} topic={topic} />
          ))}
          {(result.offset > 0 || result.next !== null) && (
            <p class="muted" data-testid="comparison-pages">
              Differences listed from number {(result.offset + 1).toLocaleString('en')} (a page lists at most{' '}
              {result.limit.toLocaleString('en')}).{' '}
              {result.offset > 0 && (
                <button type="button" class="button" disabled={busy} onClick={() => void load(shown!, 0)}>
                  First differences
                </button>
              )}{' '}
              {result.next !== null && (
                <button
                  type="button"
                  class="button"
                  disabled={busy}
                  onClick={() => void load(shown!, result.next ?? 0)}
                >
                  Next differences
                </button>
              )}
            </p>
          )}
        </div>
      )}
    </section>
  );
}

function BaselineSelect({
  id,
  label,
  baselines,
  value,
  onValue,
  withNow = false,
}: {
  id: string;
  label: string;
  baselines: BaselineView[];
  value: string;
  onValue: (value: string) => void;
  /** Offer the present state too (value `now`). */
  withNow?: boolean;
}) {
  return (
    <label class="inline-field">
      <span>{label}</span>
      <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
        {withNow && <option value="now">Now</option>}
        {baselines.map((b) => (
          <option key={b.id} value={b.id}>
            {b.name}
          </option>
        ))}
      </select>
    </label>
  );
}

const KIND_BADGES = { added: 'success', removed: 'danger', changed: 'info' } as const;

function TopicComparisonView({ topic }: { topic: TopicComparison }) {
  const { counts } = topic;
  return (
    <div class="comparison-topic">
      <h3>
        {topic.name}{' '}
        {topic.status !== 'present' && (
          <Badge kind={topic.status === 'added' ? 'success' : 'danger'}>
            {topic.status === 'added' ? 'Only in the second' : 'Only in the first'}
          </Badge>
        )}
      </h3>
      <p data-testid="comparison-counts">
        {plural(counts.added, 'record')} added, {counts.removed.toLocaleString('en')} removed,{' '}
        {counts.changed.toLocaleString('en')} changed, {counts.unchanged.toLocaleString('en')} unchanged.
        {topic.fromRevisionId !== topic.toRevisionId && topic.fromRevisionId && topic.toRevisionId && (
          <span class="muted"> The topic was re-approved in between.</span>
        )}
      </p>
      {topic.differences.length > 0 && (
        <ul class="difference-list">
          {topic.differences.map((difference) => (
            <li key={difference.id}>
              <Badge kind={KIND_BADGES[difference.kind]}>{difference.kind}</Badge>{' '}
              <strong>{difference.name}</strong> <code class="muted small">{difference.id}</code>
              {difference.changes && <ChangesTable changes={difference.changes} />}
            </li>
          ))}
        </ul>
      )}
      {topic.omitted > 0 && (
        <Notice kind="info">
          {plural(topic.omitted, 'more difference')} counted but listed on other pages (values are cut to
          1,000 characters): use Next differences, or download both baselines to see everything.
        </Notice>
      )}
    </div>
  );
}
