import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { ApprovalMeaning } from '@rxs/web-api';
import { ApiError, errorMessage } from '../api';
import { ReasonField } from './reason-field';
import { Dialog, Notice, PasswordField } from './ui';

/** What the approver signs with: their password again, what the signature means, and why. */
export interface ApprovalSignature {
  password: string;
  meaning: ApprovalMeaning;
  reason?: string;
}

const MEANINGS: { meaning: ApprovalMeaning; label: string; note: string }[] = [
  { meaning: 'approved', label: 'Approved', note: 'I approve this revision for use.' },
  { meaning: 'reviewed', label: 'Reviewed', note: 'I reviewed this revision.' },
];

export const MEANING_LABELS: Record<ApprovalMeaning, string> = { approved: 'Approved', reviewed: 'Reviewed' };

/**
 * Approval as an electronic signature: the approver enters their password again and says what the
 * signature means. A wrong password keeps the dialog open with the server's message; nothing is
 * approved then.
 */
export function ApproveDialog({
  open,
  title,
  confirmLabel = 'Sign and approve',
  onApprove,
  onCancel,
  children,
}: {
  open: boolean;
  title: string;
  confirmLabel?: string;
  onApprove: (signature: ApprovalSignature) => Promise<void>;
  onCancel: () => void;
  children?: ComponentChildren;
}) {
  const [password, setPassword] = useState('');
  const [meaning, setMeaning] = useState<ApprovalMeaning>('approved');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [passwordError, setPasswordError] = useState<string>();
  const [error, setError] = useState<string>();

  // Each opening starts empty: a password never stays in the page longer than needed.
  useEffect(() => {
    if (!open) return;
    setPassword('');
    setReason('');
    setMeaning('approved');
    setPasswordError(undefined);
    setError(undefined);
  }, [open]);

  const submit = async (event?: Event) => {
    event?.preventDefault();
    if (busy) return;
    if (!password) {
      setPasswordError('Enter your password to sign the approval.');
      return;
    }
    setBusy(true);
    setPasswordError(undefined);
    setError(undefined);
    try {
      await onApprove({ password, meaning, reason: reason.trim() || undefined });
    } catch (failure) {
      setPassword('');
      if (failure instanceof ApiError && (failure.status === 403 || failure.status === 429)) {
        setPasswordError(errorMessage(failure));
      } else {
        setError(errorMessage(failure));
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <Dialog
      open={open}
      title={title}
      onClose={onCancel}
      footer={
        <>
          <button type="button" class="button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button type="submit" form="approve-form" class="button button-primary" disabled={busy}>
            {busy ? 'Approving…' : confirmLabel}
          </button>
        </>
      }
    >
      {children}
      {error && (
        <Notice kind="error" title="Nothing was approved">
          {error}
        </Notice>
      )}
      <form id="approve-form" onSubmit={(event) => void submit(event)} noValidate>
        <fieldset class="meaning-choice">
          <legend>Meaning of your signature</legend>
          {MEANINGS.map((m) => (
            <label key={m.meaning} class="checkbox">
              <input
                type="radio"
                name="approval-meaning"
                value={m.meaning}
                checked={meaning === m.meaning}
                onChange={() => setMeaning(m.meaning)}
              />
              <span>
                <strong>{m.label}</strong> <span class="muted">{m.note}</span>
              </span>
            </label>
          ))}
        </fieldset>
        <ReasonField
          id="approval-reason"
          label="Reason (optional)"
          value={reason}
          onValue={setReason}
          hint="Kept with the approval, for example the review it follows."
        />
        <PasswordField
          label="Your password"
          id="approval-password"
          value={password}
          onValue={setPassword}
          autoComplete="current-password"
          error={passwordError}
          hint="Enter the password you sign in with: it signs the approval with your name."
        />
      </form>
    </Dialog>
  );
}
