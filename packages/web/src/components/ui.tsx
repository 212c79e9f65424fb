import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, errorMessage } from '../api';
import { linkClick } from '../router';

export function Link(props: JSX.HTMLAttributes<HTMLAnchorElement> & { href: string }) {
  return <a {...props} onClick={linkClick} />;
}

/** Copies text; falls back to a hidden text area where the Clipboard API is missing (plain-http LAN). */
export async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  document.body.appendChild(area);
  area.select();
  const copied = document.execCommand('copy');
  area.remove();
  if (!copied) throw new Error('Copying is blocked by the browser; select the text and copy it.');
}

/** Texts up to this length (ids) are read out in a copy button's name, to tell one row's from the next. */
const NAMED_TEXT_CHARS = 40;

/**
 * Copies `text`. Its accessible name is `name`, else the label with a short one-line text (an id),
 * else the label alone: a screen reader never reads out a whole JSON document as a button's name.
 */
export function CopyButton({ text, label = 'Copy', name }: { text: string; label?: string; name?: string }) {
  const short = text.length <= NAMED_TEXT_CHARS && !text.includes('\n');
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <button
      type="button"
      class="button button-small"
      aria-label={name ?? (short ? `${label}: ${text}` : label)}
      onClick={() =>
        copyText(text).then(
          () => setState('copied'),
          () => setState('failed'),
        )
      }
    >
      <span aria-hidden="true">
        {state === 'copied' ? '✓ Copied' : state === 'failed' ? 'Copy failed' : label}
      </span>
      <span class="visually-hidden" role="status">
        {state === 'copied' ? 'Copied to the clipboard' : ''}
      </span>
    </button>
  );
}

/** An identifier with what it is for and a copy button. */
export function IdField({
  label,
  id,
  hint,
  testId,
  emphasis,
}: {
  label: string;
  id: string;
  hint?: ComponentChildren;
  testId?: string;
  emphasis?: boolean;
}) {
  return (
    <div class={`id-field${emphasis ? ' id-field-emphasis' : ''}`} data-testid={testId}>
      <div class="id-field-label">{label}</div>
      <div class="id-field-value">
        <code>{id}</code>
        <CopyButton text={id} label="Copy" />
      </div>
      {hint && <div class="id-field-hint">{hint}</div>}
    </div>
  );
}

type NoticeKind = 'info' | 'success' | 'warning' | 'error';

export function Notice({
  kind = 'info',
  title,
  children,
  onDismiss,
}: {
  kind?: NoticeKind;
  title?: string;
  children?: ComponentChildren;
  onDismiss?: () => void;
}) {
  return (
    <div class={`notice notice-${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      <div class="notice-body">
        {title && <strong class="notice-title">{title}</strong>}
        {children && <div>{children}</div>}
      </div>
      {onDismiss && (
        <button type="button" class="notice-dismiss" aria-label="Dismiss" onClick={onDismiss}>
          ×
        </button>
      )}
    </div>
  );
}

/**
 * What a failed load means to the user and what to do: a wrong address or a deleted object is not
 * fixed by trying again, so only failures that may pass (the network, the server) offer a retry.
 */
export function failureText(error: unknown): { title: string; text: string; retry: boolean } {
  if (error instanceof ApiError) {
    const inAddress = error.items.some((item) => item.loc[0] === 'path' || item.loc[0] === 'params');
    if (error.status === 422 && inAddress)
      return {
        title: 'This address is not valid',
        text: 'The id in the address is not an id this service gives (24 hexadecimal characters). Check the link you followed, or find the item from the list.',
        retry: false,
      };
    if (error.status === 404)
      return {
        title: 'Not found',
        text: `${errorMessage(error)} It may have been deleted, or the link is wrong: find it again from the list (a deleted record's history stays readable from its topic).`,
        retry: false,
      };
    if (error.status === 403)
      return {
        title: 'Not allowed',
        text: `${errorMessage(error)} Ask an owner or admin of your tenant for the role that allows it.`,
        retry: false,
      };
    if (error.status < 500 && error.status !== 429)
      return { title: 'The service refused this', text: errorMessage(error), retry: false };
  }
  return {
    title: 'Could not load this',
    text: `${errorMessage(error)} The service may be unreachable or busy: try again in a moment.`,
    retry: true,
  };
}

export function ErrorNotice({ error, onRetry }: { error: unknown; onRetry?: () => void }) {
  const { title, text, retry } = failureText(error);
  return (
    <Notice kind="error" title={title}>
      <p>{text}</p>
      {onRetry && retry && (
        <button type="button" class="button button-small" onClick={onRetry}>
          Try again
        </button>
      )}
    </Notice>
  );
}

export function EmptyState({
  title,
  children,
  action,
}: {
  title: string;
  children?: ComponentChildren;
  action?: ComponentChildren;
}) {
  return (
    <div class="empty-state">
      <p class="empty-state-title">{title}</p>
      {children && <div class="empty-state-text">{children}</div>}
      {action && <div class="empty-state-action">{action}</div>}
    </div>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div class="loading" role="status" aria-live="polite">
      <span class="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Badge({
  kind = 'neutral',
  children,
}: {
  kind?: 'neutral' | 'success' | 'warning' | 'danger' | 'info';
  children: ComponentChildren;
}) {
  return <span class={`badge badge-${kind}`}>{children}</span>;
}

export function PageHeader({
  title,
  crumbs,
  actions,
  children,
}: {
  title: ComponentChildren;
  crumbs?: { href: string; label: string }[];
  actions?: ComponentChildren;
  children?: ComponentChildren;
}) {
  return (
    <header class="page-header">
      {crumbs && crumbs.length > 0 && (
        <nav class="crumbs" aria-label="Breadcrumb">
          <ol>
            {crumbs.map((crumb) => (
              <li key={crumb.href}>
                <Link href={crumb.href}>{crumb.label}</Link>
              </li>
            ))}
          </ol>
        </nav>
      )}
      <div class="page-header-row">
        <h1>{title}</h1>
        {actions && <div class="page-actions">{actions}</div>}
      </div>
      {children}
    </header>
  );
}

/**
 * A modal dialog on the native <dialog>: focus moves into it, Escape closes it, and the page
 * behind cannot be reached by keyboard meanwhile.
 */
export function Dialog({
  open,
  title,
  onClose,
  children,
  footer,
}: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  footer?: ComponentChildren;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const dialog = ref.current;
    if (!dialog) return;
    if (open && !dialog.open) dialog.showModal();
    if (!open && dialog.open) dialog.close();
  }, [open]);
  return (
    <dialog
      ref={ref}
      class="dialog"
      aria-labelledby="dialog-title"
      onCancel={(event) => {
        event.preventDefault();
        onClose();
      }}
    >
      {open && (
        <>
          <h2 id="dialog-title" class="dialog-title">
            {title}
          </h2>
          <div class="dialog-body">{children}</div>
          {footer && <div class="dialog-footer">{footer}</div>}
        </>
      )}
    </dialog>
  );
}

/** Asks before something that cannot be undone. */
export function ConfirmDialog({
  open,
  title,
  children,
  confirmLabel,
  tone = 'danger',
  busy,
  onConfirm,
  onCancel,
}: {
  open: boolean;
  title: string;
  children: ComponentChildren;
  confirmLabel: string;
  tone?: 'danger' | 'primary';
  busy?: boolean;
  onConfirm: () => void;
  onCancel: () => void;
}) {
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
          <button type="button" class={`button button-${tone}`} onClick={onConfirm} disabled={busy}>
            {busy ? 'Working…' : confirmLabel}
          </button>
        </>
      }
    >
      {children}
    </Dialog>
  );
}

export function Field({
  label,
  id,
  error,
  hint,
  children,
}: {
  label: string;
  id: string;
  error?: string;
  hint?: ComponentChildren;
  children: ComponentChildren;
}) {
  return (
    <div class={`field${error ? ' field-invalid' : ''}`}>
      <label for={id}>{label}</label>
      {children}
      {hint && !error && (
        <div class="field-hint" id={`${id}-hint`}>
          {hint}
        </div>
      )}
      {error && (
        <div class="field-error" id={`${id}-error`} role="alert">
          {error}
        </div>
      )}
    </div>
  );
}

export function PasswordField({
  label,
  id,
  value,
  onValue,
  autoComplete,
  error,
  hint,
}: {
  label: string;
  id: string;
  value: string;
  onValue: (value: string) => void;
  autoComplete: 'current-password' | 'new-password';
  error?: string;
  hint?: ComponentChildren;
}) {
  return (
    <Field label={label} id={id} error={error} hint={hint}>
      <input
        id={id}
        type="password"
        autoComplete={autoComplete}
        value={value}
        aria-invalid={error ? true : undefined}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </Field>
  );
}

/** Date-times as the viewer's local time, to the minute, with the exact UTC value on hover. */
export function DateTime({ value }: { value: string | null | undefined }) {
  if (!value) return <span class="muted">—</span>;
  return (
    <time dateTime={value} title={value}>
      {formatDateTime(value)}
    </time>
  );
}

export function formatDateTime(value: string): string {
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

export function plural(count: number, one: string, many = `${one}s`): string {
  return `${count.toLocaleString('en')} ${count === 1 ? one : many}`;
}
