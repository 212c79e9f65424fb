import { Field } from './ui';

/** Longest reason or description the server keeps (MAX_CHANGE_REASON). */
export const MAX_REASON = 2000;

/** A short free text kept with a change: why a record changed, why an approval was given. */
export function ReasonField({
  id,
  label = 'Reason for change (optional)',
  value,
  onValue,
  error,
  hint = 'Kept in the record’s history with your name and the time.',
  maxLength = MAX_REASON,
}: {
  id: string;
  label?: string;
  value: string;
  onValue: (value: string) => void;
  error?: string;
  hint?: string;
  maxLength?: number;
}) {
  return (
    <Field label={label} id={id} hint={hint} error={error}>
      <textarea
        id={id}
        rows={2}
        maxLength={maxLength}
        value={value}
        aria-invalid={error ? true : undefined}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
    </Field>
  );
}
