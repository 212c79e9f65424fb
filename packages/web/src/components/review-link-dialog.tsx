import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { api, errorMessage } from '../api';
import { ReasonField } from './reason-field';
import { ConfirmDialog } from './ui';

/**
 * Reviews a suspect link: the user confirms it still holds for both records as they are now, with
 * an optional comment for the link's history (`POST /api/traces/{id}/review`). Open while
 * `traceId` is set; `children` says which link.
 */
export function ReviewLinkDialog({
  traceId,
  children,
  onClose,
  onReviewed,
  onFailed,
}: {
  traceId: string | undefined;
  children: ComponentChildren;
  onClose: () => void;
  onReviewed: () => void;
  onFailed: (message: string) => void;
}) {
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const close = () => {
    setComment('');
    onClose();
  };
  const review = async () => {
    if (!traceId) return;
    setBusy(true);
    try {
      await api.post(`/traces/${traceId}/review`, comment.trim() ? { comment: comment.trim() } : {});
      close();
      onReviewed();
    } catch (failure) {
      close();
      onFailed(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  };
  return (
    <ConfirmDialog
      open={traceId !== undefined}
      title="Review this link?"
      confirmLabel="Link still holds"
      tone="primary"
      busy={busy}
      onCancel={close}
      onConfirm={() => void review()}
    >
      {children}
      <ReasonField
        id="review-comment"
        label="Comment (optional)"
        value={comment}
        onValue={setComment}
        hint="Kept in the link’s history with your name and the time."
      />
    </ConfirmDialog>
  );
}
