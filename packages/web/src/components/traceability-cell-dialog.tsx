import { useState } from 'preact/hooks';
import { traceCreateOf } from '@rxs/contract/plain';
import { api, errorMessage } from '../api';
import { ConfirmDialog, Dialog } from './ui';
import { EndLink, endLabel, type MatrixCell } from './traceability-matrix';

/**
 * A matrix cell opened: a covered cell shows its trace (both records, linked to their pages, and the
 * role that names it); an empty cell asks before making the trace under the rule's role, through
 * the same `POST /api/traces` as a record's page, its two ends as the role says.
 */
export function TraceabilityCellDialog({
  cell,
  onClose,
  onMade,
}: {
  cell: MatrixCell | undefined;
  onClose: () => void;
  onMade: (text: string) => void;
}) {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  const close = () => {
    setError(undefined);
    onClose();
  };
  const role = cell?.role;
  const verb = cell?.rule.rule.linkType ?? 'linked to';
  const sentence = cell && (
    <p class="trace-sentence">
      <EndLink end={cell.row} /> {cell.row.title && <span>{cell.row.title} </span>}
      <strong>{verb}</strong> <EndLink end={cell.column} />
      {cell.column.title && <span> {cell.column.title}</span>}
    </p>
  );

  const make = async () => {
    if (!cell || !role || !cell.row.record || !cell.column.record) return;
    setBusy(true);
    setError(undefined);
    try {
      // The rule reads from the role's `to` topic (rows) to its `from` topic (columns).
      await api.post('/traces', traceCreateOf(role, cell.column.record.id, cell.row.record.id));
      onMade(`Made the trace ${endLabel(cell.row)} ${verb} ${endLabel(cell.column)}.`);
      close();
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  };

  if (cell?.kind === 'empty')
    return (
      <ConfirmDialog
        open
        title="Make a trace"
        confirmLabel="Make the trace"
        tone="primary"
        busy={busy}
        onConfirm={() => void make()}
        onCancel={close}
      >
        {sentence}
        <p class="muted">
          As the trace model’s role “{role?.forward_name} / {role?.backward_name}” names it.
        </p>
        {error && (
          <p class="field-error" role="alert">
            {error}
          </p>
        )}
      </ConfirmDialog>
    );
  return (
    <Dialog
      open={cell !== undefined}
      title="Trace"
      onClose={close}
      footer={
        <button type="button" class="button" onClick={close}>
          Close
        </button>
      }
    >
      {sentence}
      <p class="muted">
        {role
          ? `The trace model’s role “${role.forward_name} / ${role.backward_name}”.`
          : 'A trace between the two topics.'}
        {cell?.kind === 'suspect' &&
          ' Suspect: a record changed since the link was made or reviewed; review it under Suspect links.'}
      </p>
    </Dialog>
  );
}
