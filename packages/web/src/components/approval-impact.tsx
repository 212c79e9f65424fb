import { useEffect, useState } from 'preact/hooks';
import type { ApprovalImpact, FormSchema } from '@rxs/web-api';
import { api, errorMessage } from '../api';
import { Notice, plural } from './ui';

/**
 * Before a re-approval: how many of the topic's records would not validate against the new form
 * (a required field added, an option removed) and which, so nobody learns it from records that
 * can no longer be saved. Checked when the dialog opens, with the form as it is on the page.
 */
export function ApprovalImpactNotice({
  open,
  revisionId,
  schema,
}: {
  open: boolean;
  revisionId: string;
  /** The form being approved, when the page holds unsaved edits of it. */
  schema?: () => FormSchema | undefined;
}) {
  const [state, setState] = useState<{ impact?: ApprovalImpact; error?: string }>();
  useEffect(() => {
    if (!open) return;
    let current = true;
    setState(undefined);
    const knowledge_topic_schema = schema?.();
    api
      .post<ApprovalImpact>(
        `/revisions/${revisionId}/impact`,
        knowledge_topic_schema ? { knowledge_topic_schema } : {},
      )
      .then(
        (impact) => current && setState({ impact }),
        (error: unknown) => current && setState({ error: errorMessage(error) }),
      );
    return () => {
      current = false;
    };
  }, [open, revisionId]);

  if (!state) return <p class="muted">Checking the topic’s records against this form…</p>;
  if (state.error) return <Notice kind="warning">The records could not be checked: {state.error}</Notice>;
  const { checked, failing, examples } = state.impact!;
  if (checked === 0) return null;
  if (failing === 0)
    return (
      <p data-testid="approval-impact">
        All {plural(checked, 'record')} of the topic validate against this form.
      </p>
    );
  return (
    <Notice kind="warning" title={`${failing} of ${plural(checked, 'record')} would not validate`}>
      <div data-testid="approval-impact">
        <p>
          After this approval they cannot be saved until their data is fixed. Approve anyway only if that is
          intended; otherwise change the form first.
        </p>
        <ul>
          {examples.map((example) => (
            <li key={example.id}>
              <strong>{example.name}</strong>: {example.problems.join('; ')}
            </li>
          ))}
          {failing > examples.length && <li>…and {failing - examples.length} more.</li>}
        </ul>
      </div>
    </Notice>
  );
}
