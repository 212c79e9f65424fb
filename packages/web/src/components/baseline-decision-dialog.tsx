import { useEffect, useState } from 'preact/hooks';
import type { ApprovalMeaning, BaselineView } from '@rxs/web-api';
import { api, ApiError, errorMessage, fieldErrorsOf } from '../api';
import { MEANING_LABELS } from './approve-dialog';
import { ReasonField } from './reason-field';
import { Dialog, Notice, PasswordField } from './ui';

/** A required signer's decision on a proposed baseline: sign with the meaning asked, or refuse. */
export type BaselineDecision = { kind: 'sign'; meaning: ApprovalMeaning } | { kind: 'refuse' };

const MEANING_NOTES: Record<ApprovalMeaning, string> = {
  approved: 'I approve this baseline for release.',
  reviewed: 'I reviewed this baseline.',
};

/**
 * Signing or refusing a baseline as an electronic signature: the signer enters their password
 * again. Each opening starts empty, so a password never stays in the page longer than needed. The
 * server's answer is shown where it belongs: a wrong password (403) or its wait (429) at the
 * password, a missing reason at the reason, a baseline closed meanwhile (409) above the form; the
 * dialog stays open, as nothing was recorded.
 */
export function BaselineDecisionDialog({
  baseline,
  decision,
  onDecided,
  onOutdated,
  onCancel,
}: {
  /** The baseline decided on; no baseline: the dialog is closed. */
  baseline: BaselineView | undefined;
  decision: BaselineDecision;
  onDecided: (baseline: BaselineView) => void;
  /** The baseline was released or refused meanwhile (409): the page shows it as it is now. */
  onOutdated: () => void;
  onCancel: () => void;
}) {
  const open = baseline !== undefined;
  const [password, setPassword] = useState('');
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [errors, setErrors] = useState<{ password?: string; reason?: string }>({});
  const [failure, setFailure] = useState<string>();
  const signing = decision.kind === 'sign';

  useEffect(() => {
    if (!open) return;
    setPassword('');
    setReason('');
    setErrors({});
    setFailure(undefined);
  }, [open, baseline?.id, decision.kind]);

  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy || !baseline) return;
    const missing = {
      password: password ? undefined : `Enter your password to ${signing ? 'sign' : 'refuse'}.`,
      reason:
        !signing && !reason.trim() ? 'Say why you refuse: the reason is kept with the baseline.' : undefined,
    };
    if (missing.password || missing.reason) {
      setErrors(missing);
      return;
    }
    setBusy(true);
    setErrors({});
    setFailure(undefined);
    try {
      const decided = signing
        ? await api.post<BaselineView>(`/baselines/${baseline.id}/signatures`, {
            meaning: decision.meaning,
            password,
            reason: reason.trim() || undefined,
          })
        : await api.post<BaselineView>(`/baselines/${baseline.id}/refusals`, {
            reason: reason.trim(),
            password,
          });
      onDecided(decided);
    } catch (error) {
      setPassword('');
      const fields = fieldErrorsOf(error);
      if (error instanceof ApiError && (error.status === 403 || error.status === 429)) {
        setErrors({ password: errorMessage(error) });
      } else if (fields.password || fields.reason) {
        setErrors({ password: fields.password, reason: fields.reason });
      } else {
        setFailure(errorMessage(error));
        if (error instanceof ApiError && error.status === 409) onOutdated();
      }
    } finally {
      setBusy(false);
    }
  };

  const verb = signing ? 'Sign' : 'Refuse';
  return (
    <Dialog
      open={open}
      title={`${verb} baseline “${baseline?.name ?? ''}”?`}
      onClose={onCancel}
      footer={
        <>
          <button type="button" class="button" onClick={onCancel} disabled={busy}>
            Cancel
          </button>
          <button
            type="submit"
            form="baseline-decision-form"
            class={`button ${signing ? 'button-primary' : 'button-danger'}`}
            disabled={busy}
          >
            {busy ? 'Working…' : signing ? 'Sign baseline' : 'Refuse baseline'}
          </button>
        </>
      }
    >
      {failure && (
        <Notice kind="error" title={signing ? 'Nothing was signed' : 'Nothing was refused'}>
          {failure}
        </Notice>
      )}
      {signing ? (
        <p>
          Your signature means <strong>{MEANING_LABELS[decision.meaning]}</strong>:{' '}
          {MEANING_NOTES[decision.meaning]} When every signer has signed, the baseline is released and never
          changes.
        </p>
      ) : (
        <p>A refusal ends the proposal for good: nobody else can sign it. A new proposal can supersede it.</p>
      )}
      <form id="baseline-decision-form" onSubmit={(event) => void submit(event)} noValidate>
        <ReasonField
          id="baseline-decision-reason"
          label={signing ? 'Reason (optional)' : 'Reason'}
          value={reason}
          onValue={setReason}
          error={errors.reason}
          hint={
            signing
              ? 'Kept with your signature, for example the review it follows.'
              : 'Kept with the baseline, for the author of the next proposal.'
          }
        />
        <PasswordField
          label="Your password"
          id="baseline-decision-password"
          value={password}
          onValue={setPassword}
          autoComplete="current-password"
          error={errors.password}
          hint={`Enter the password you sign in with: it ${signing ? 'signs' : 'refuses'} with your name.`}
        />
      </form>
    </Dialog>
  );
}
