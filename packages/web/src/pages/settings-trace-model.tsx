import { useEffect, useRef, useState } from 'preact/hooks';
import type {
  TopicSummary,
  TraceModel,
  TraceModelRelationType,
  TraceRole,
  TraceSourceEnd,
} from '@rxs/web-api';
import { ApiError, errorMessage } from '../api';
import { ErrorNotice, Field, Loading, Notice } from '../components/ui';
import { useAsync, useTitle } from '../hooks';
import { useCan, useSession } from '../session';
import { getTraceModel, putTraceModel } from '../trace-model-api';
import { approvedTopics } from './export';
import { SettingsHeader } from './settings-nav';
import './settings-trace-model.css';

/** Who may replace the model: the contract's TRACE_MODEL_WRITE_PERMISSION (those who approve topics). */
const WRITE_PERMISSION = 'kt:approve';

/** The fields of a role the page edits, under which the service's 422 items are shown. */
type RoleField = 'id' | 'forward_name' | 'backward_name' | 'from' | 'to' | 'trace_source' | 'relation_type';
const ROLE_FIELDS: readonly RoleField[] = [
  'id',
  'forward_name',
  'backward_name',
  'from',
  'to',
  'trace_source',
  'relation_type',
];
/** Problems by role index, then field; problems of the model as a whole under `model`. */
interface Problems {
  roles: Record<number, Partial<Record<RoleField, string>>>;
  model: string[];
}
const NO_PROBLEMS: Problems = { roles: {}, model: [] };

/** The service's 422 items (`loc` `["body", "roles", index, field, ...]`) at the fields they are about. */
function problemsOf(error: ApiError): Problems {
  const problems: Problems = { roles: {}, model: [] };
  for (const item of error.items) {
    const [where, list, index, field] = item.loc;
    const at = Number(index);
    if (
      where === 'body' &&
      list === 'roles' &&
      Number.isInteger(at) &&
      ROLE_FIELDS.includes(field as RoleField)
    ) {
      const fields = (problems.roles[at] ??= {});
      fields[field as RoleField] ??= item.msg;
    } else problems.model.push(item.msg);
  }
  return problems;
}

/** A role id from its forward name ("mitigated by" → "mitigated-by"), as the id pattern allows. */
function idOf(name: string): string {
  const slug = name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[^a-z]+/, '')
    .replace(/-+$/, '')
    .slice(0, 64);
  return slug || 'role';
}

const INTERNAL_RELATION = /^auto_/;

const topicNameOf = (end: TraceRole['from']) => end.topic_name ?? end.topic_history_id;

/**
 * Settings: the tenant's trace model, the roles that say what a trace between two topics means.
 * Everyone reads it as a table; owners and admins change roles in a copy and save the whole model
 * at the version they read, so a change made meanwhile by someone else is refused, never lost.
 */
export function TraceModelPage() {
  useTitle('Trace model');
  const can = useCan();
  const mayEdit = can(WRITE_PERMISSION);
  const model = useAsync(getTraceModel, []);
  const topics = useAsync(() => (mayEdit ? approvedTopics() : Promise.resolve([])), [mayEdit]);
  // The model as the last save answered it, until the page reads it again.
  const [saved, setSaved] = useState<TraceModel>();
  const [draft, setDraft] = useState<TraceRole[]>();
  const [editing, setEditing] = useState<{ index: number; role: TraceRole }>();
  const [problems, setProblems] = useState<Problems>(NO_PROBLEMS);
  const [message, setMessage] = useState<{ kind: 'success' | 'error'; text: string }>();
  const [stale, setStale] = useState(false);
  const [busy, setBusy] = useState(false);
  // After a role is applied or removed its form or row is gone: the focus goes on to Save.
  const saveButton = useRef<HTMLButtonElement>(null);
  const [focusSave, setFocusSave] = useState(0);
  useEffect(() => {
    if (focusSave > 0) saveButton.current?.focus();
  }, [focusSave]);

  const loaded = saved ?? model.data;
  const roles = draft ?? loaded?.roles ?? [];
  const changed = draft !== undefined;

  const reload = () => {
    setDraft(undefined);
    setEditing(undefined);
    setProblems(NO_PROBLEMS);
    setStale(false);
    setMessage(undefined);
    setSaved(undefined);
    model.reload();
  };

  const apply = (index: number, role: TraceRole) => {
    const next = [...roles];
    next.splice(index, index < roles.length ? 1 : 0, role);
    setDraft(next);
    setEditing(undefined);
    setMessage(undefined);
    const { [index]: _fixed, ...others } = problems.roles;
    setProblems({ ...problems, roles: others });
    setFocusSave((n) => n + 1);
  };

  const remove = (index: number) => {
    setDraft(roles.filter((_, i) => i !== index));
    setEditing(undefined);
    setProblems(NO_PROBLEMS);
    setMessage({
      kind: 'success',
      text: `Role “${roles[index]!.forward_name}” removed; save to keep the change.`,
    });
    setFocusSave((n) => n + 1);
  };

  const save = async () => {
    if (!loaded || !draft) return;
    setBusy(true);
    setMessage(undefined);
    try {
      setSaved(await putTraceModel({ roles: draft }, loaded.version));
      setDraft(undefined);
      setProblems(NO_PROBLEMS);
      setMessage({ kind: 'success', text: 'The trace model was saved.' });
    } catch (error) {
      if (error instanceof ApiError && (error.status === 409 || error.status === 412)) setStale(true);
      else if (error instanceof ApiError && error.status === 422) {
        const found = problemsOf(error);
        setProblems(found);
        const first = Object.keys(found.roles).map(Number)[0];
        if (first !== undefined && draft[first]) setEditing({ index: first, role: draft[first] });
        else setMessage({ kind: 'error', text: errorMessage(error) });
      } else setMessage({ kind: 'error', text: errorMessage(error) });
    } finally {
      setBusy(false);
    }
  };

  const problemCount =
    Object.values(problems.roles).reduce((sum, fields) => sum + Object.keys(fields).length, 0) +
    problems.model.length;

  return (
    <>
      <SettingsHeader />
      <p class="page-lead">
        What a trace between two knowledge topics means: each role names the traces of one relation type
        between records of two topics, read one way (“verifies”) and the other (“verified by”).
      </p>
      {model.error !== undefined && <ErrorNotice error={model.error} onRetry={model.reload} />}
      {!loaded && model.loading && <Loading />}
      {stale && (
        <Notice kind="warning" title="Someone else changed the trace model">
          <p>
            It changed since you opened it, so your changes were not saved. Reload it to see theirs, then make
            yours again.
          </p>
          <button type="button" class="button button-small" onClick={reload}>
            Reload the trace model
          </button>
        </Notice>
      )}
      {message && (
        <Notice kind={message.kind} onDismiss={() => setMessage(undefined)}>
          {message.text}
        </Notice>
      )}
      {problemCount > 0 && (
        <Notice
          kind="error"
          title={`The trace model was not saved: ${problemCount} ${problemCount === 1 ? 'problem' : 'problems'}`}
        >
          <ul class="trace-model-problems">
            {problems.model.map((text) => (
              <li key={text}>{text}</li>
            ))}
            {Object.entries(problems.roles).map(([index, fields]) => (
              <li key={index}>
                Role {Number(index) + 1} ({roles[Number(index)]?.forward_name}):{' '}
                {Object.values(fields).join(' ')}{' '}
                <button
                  type="button"
                  class="button button-small"
                  onClick={() => setEditing({ index: Number(index), role: roles[Number(index)]! })}
                >
                  Edit role {Number(index) + 1}
                </button>
              </li>
            ))}
          </ul>
        </Notice>
      )}
      {loaded && (
        <section class="panel" aria-labelledby="trace-roles-title">
          <div class="panel-head">
            <h2 id="trace-roles-title" class="panel-title">
              Roles
            </h2>
            <span class="muted">{changed ? 'Unsaved changes' : `Version ${loaded.version}`}</span>
          </div>
          {!mayEdit && <p class="muted">Only owners and admins change the trace model; you can read it.</p>}
          {roles.length === 0 ? (
            <p class="muted">No roles yet: traces are named by their relation type only.</p>
          ) : (
            <div class="table-wrap">
              <table class="table trace-model-table" data-testid="trace-model-table">
                <caption class="visually-hidden">Roles of the trace model</caption>
                <thead>
                  <tr>
                    <th scope="col">Forward name</th>
                    <th scope="col">Backward name</th>
                    <th scope="col">From topic</th>
                    <th scope="col">To topic</th>
                    <th scope="col">Relation type</th>
                    {mayEdit && (
                      <th scope="col">
                        <span class="visually-hidden">Actions</span>
                      </th>
                    )}
                  </tr>
                </thead>
                <tbody>
                  {roles.map((role, index) => (
                    <tr
                      key={`${index}:${role.id}`}
                      class={problems.roles[index] ? 'trace-role-invalid' : undefined}
                    >
                      <th scope="row">{role.forward_name}</th>
                      <td>{role.backward_name}</td>
                      <td>{topicNameOf(role.from)}</td>
                      <td>{topicNameOf(role.to)}</td>
                      <td>
                        <code>{role.relation_type}</code>
                        <div class="cell-sub">trace source: {topicNameOf(role[role.trace_source])}</div>
                      </td>
                      {mayEdit && (
                        <td class="actions">
                          <button
                            type="button"
                            class="button button-small"
                            aria-label={`Edit role ${role.forward_name}`}
                            onClick={() => setEditing({ index, role })}
                          >
                            Edit
                          </button>
                          <button
                            type="button"
                            class="button button-small button-danger-outline"
                            aria-label={`Remove role ${role.forward_name}`}
                            onClick={() => remove(index)}
                          >
                            Remove
                          </button>
                        </td>
                      )}
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )}
          {mayEdit && (
            <div class="button-row trace-model-actions">
              <button
                type="button"
                class="button"
                disabled={editing !== undefined}
                onClick={() => setEditing({ index: roles.length, role: blankRole() })}
              >
                Add role
              </button>
              <button
                ref={saveButton}
                type="button"
                class="button button-primary"
                disabled={!changed || busy || stale}
                onClick={save}
              >
                {busy ? 'Saving…' : 'Save trace model'}
              </button>
              {changed && (
                <button type="button" class="button" disabled={busy} onClick={reload}>
                  Discard changes
                </button>
              )}
            </div>
          )}
        </section>
      )}
      {mayEdit && editing && (
        <RoleForm
          key={editing.index}
          index={editing.index}
          role={editing.role}
          isNew={editing.index >= roles.length}
          topics={topics.data ?? []}
          errors={problems.roles[editing.index] ?? {}}
          onApply={(role) => apply(editing.index, role)}
          onCancel={() => setEditing(undefined)}
        />
      )}
    </>
  );
}

function blankRole(): TraceRole {
  return {
    id: '',
    forward_name: '',
    backward_name: '',
    from: { topic_history_id: '' },
    to: { topic_history_id: '' },
    trace_source: 'from',
    relation_type: 'is_related',
  };
}

/** One role's fields: applied to the page's copy of the model, which Save sends. */
function RoleForm({
  index,
  role,
  isNew,
  topics,
  errors,
  onApply,
  onCancel,
}: {
  index: number;
  role: TraceRole;
  isNew: boolean;
  topics: TopicSummary[];
  errors: Partial<Record<RoleField, string>>;
  onApply: (role: TraceRole) => void;
  onCancel: () => void;
}) {
  const { meta } = useSession();
  const [form, setForm] = useState(role);
  const [idTouched, setIdTouched] = useState(!isNew);
  const [showInternal, setShowInternal] = useState(INTERNAL_RELATION.test(role.relation_type));
  const [missing, setMissing] = useState<Partial<Record<RoleField, string>>>({});
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);

  const shown = { ...errors, ...missing };
  const title = isNew ? 'Add a role' : `Edit role ${index + 1}: ${role.forward_name}`;
  const relationTypes = meta.relationTypes.filter(
    (type) => showInternal || !INTERNAL_RELATION.test(type) || type === form.relation_type,
  );
  // The model's own topics stay choosable even if they are not approved (the service decides).
  const choices = new Map(topics.map((topic) => [topic.historyId, topic.name]));
  for (const end of [role.from, role.to])
    if (end.topic_history_id && !choices.has(end.topic_history_id))
      choices.set(end.topic_history_id, topicNameOf(end));

  const describe = (field: RoleField, id: string) =>
    shown[field] ? { 'aria-invalid': true, 'aria-describedby': `${id}-error` } : {};

  const submit = (event: Event) => {
    event.preventDefault();
    const problems: Partial<Record<RoleField, string>> = {};
    if (!form.forward_name.trim())
      problems.forward_name = 'Say how the role reads from its from topic, e.g. “verifies”.';
    if (!form.backward_name.trim())
      problems.backward_name = 'Say how the role reads from its to topic, e.g. “verified by”.';
    if (!form.from.topic_history_id) problems.from = 'Choose the topic the role reads from.';
    if (!form.to.topic_history_id) problems.to = 'Choose the topic the role reads to.';
    setMissing(problems);
    if (Object.keys(problems).length > 0) return;
    onApply({
      ...form,
      id: form.id.trim() || idOf(form.forward_name),
      forward_name: form.forward_name.trim(),
      backward_name: form.backward_name.trim(),
    });
  };

  const topicSelect = (end: 'from' | 'to', label: string, hint: string) => {
    const id = `trace-role-${end}`;
    return (
      <Field label={label} id={id} error={shown[end]} hint={hint}>
        <select
          id={id}
          value={form[end].topic_history_id}
          {...describe(end, id)}
          onChange={(e) =>
            setForm({
              ...form,
              [end]: {
                topic_history_id: e.currentTarget.value,
                topic_name: choices.get(e.currentTarget.value) ?? null,
              },
            })
          }
        >
          <option value="">Choose a topic…</option>
          {[...choices].map(([historyId, name]) => (
            <option key={historyId} value={historyId}>
              {name}
            </option>
          ))}
        </select>
      </Field>
    );
  };

  return (
    <form class="panel trace-role-form" onSubmit={submit} aria-labelledby="trace-role-title" noValidate>
      <h2 id="trace-role-title" class="panel-title" tabIndex={-1} ref={heading}>
        {title}
      </h2>
      <div class="form-grid">
        <Field
          label="Forward name"
          id="trace-role-forward"
          error={shown.forward_name}
          hint="How it reads from the from topic, e.g. “verifies”"
        >
          <input
            id="trace-role-forward"
            value={form.forward_name}
            maxLength={100}
            {...describe('forward_name', 'trace-role-forward')}
            onInput={(e) => {
              const forward = e.currentTarget.value;
              setForm({ ...form, forward_name: forward, id: idTouched ? form.id : idOf(forward) });
            }}
          />
        </Field>
        <Field
          label="Backward name"
          id="trace-role-backward"
          error={shown.backward_name}
          hint="How it reads from the to topic, e.g. “verified by”"
        >
          <input
            id="trace-role-backward"
            value={form.backward_name}
            maxLength={100}
            {...describe('backward_name', 'trace-role-backward')}
            onInput={(e) => setForm({ ...form, backward_name: e.currentTarget.value })}
          />
        </Field>
        {topicSelect('from', 'From topic', 'Its records “verify”, “implement”…')}
        {topicSelect('to', 'To topic', 'Its records are “verified by”, “implemented by”…')}
        <Field
          label="Trace source"
          id="trace-role-source"
          error={shown.trace_source}
          hint="Which end is the trace’s source"
        >
          <select
            id="trace-role-source"
            value={form.trace_source}
            {...describe('trace_source', 'trace-role-source')}
            onChange={(e) => setForm({ ...form, trace_source: e.currentTarget.value as TraceSourceEnd })}
          >
            <option value="from">The from topic’s record</option>
            <option value="to">The to topic’s record</option>
          </select>
        </Field>
        <Field
          label="Relation type"
          id="trace-role-relation"
          error={shown.relation_type}
          hint="The traces’ relation type; it stays as it is"
        >
          <select
            id="trace-role-relation"
            value={form.relation_type}
            {...describe('relation_type', 'trace-role-relation')}
            onChange={(e) =>
              setForm({ ...form, relation_type: e.currentTarget.value as TraceModelRelationType })
            }
          >
            {relationTypes.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </Field>
        <Field
          label="Role id"
          id="trace-role-id"
          error={shown.id}
          hint="Unique in the model: a-z, 0-9, _ and -; also the link name of exports"
        >
          <input
            id="trace-role-id"
            value={form.id}
            maxLength={64}
            spellcheck={false}
            {...describe('id', 'trace-role-id')}
            onInput={(e) => {
              setIdTouched(true);
              setForm({ ...form, id: e.currentTarget.value });
            }}
          />
        </Field>
      </div>
      <label class="checkbox">
        <input
          type="checkbox"
          checked={showInternal}
          onChange={(e) => setShowInternal(e.currentTarget.checked)}
        />
        Show internal relation types (auto_…, made by RXS itself)
      </label>
      <div class="button-row">
        <button type="submit" class="button button-primary">
          {isNew ? 'Add to the model' : 'Apply'}
        </button>
        <button type="button" class="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
