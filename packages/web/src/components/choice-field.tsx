import type { ImportChoice } from '@rxs/web-api';
import { Field } from './ui';

/**
 * The part of a file to import when it holds several (a workbook's sheet, a ReqIF file's spec
 * object type, a ReqIF archive's .reqif file): typed, or once a check answered the names, chosen
 * among them (typed still when the file holds more than the check could list).
 */
export function ChoiceField({
  id,
  label,
  placeholder,
  choice,
  value,
  onValue,
}: {
  id: string;
  label: string;
  /** What is imported when nothing is chosen. */
  placeholder: string;
  /** The names the last check answered, if it asked for a choice. */
  choice?: ImportChoice;
  value: string;
  onValue: (value: string) => void;
}) {
  if (choice && choice.more === 0)
    return (
      <Field
        label={label}
        id={id}
        hint={`The file holds ${choice.names.length}: choose the one to import, then check the file again.`}
      >
        <select id={id} value={value} onChange={(e) => onValue(e.currentTarget.value)}>
          <option value="">Choose one</option>
          {[...new Set([...choice.names, ...(value ? [value] : [])])].map((name) => (
            <option key={name} value={name}>
              {name}
            </option>
          ))}
        </select>
      </Field>
    );
  return (
    <Field
      label={choice ? label : `${label} (optional)`}
      id={id}
      hint={
        choice &&
        `The file holds ${choice.names.length + choice.more}, more than the check lists: type the name of the one to import, then check the file again.`
      }
    >
      <input
        id={id}
        value={value}
        placeholder={placeholder}
        list={choice ? `${id}-names` : undefined}
        onInput={(e) => onValue(e.currentTarget.value)}
      />
      {choice && (
        <datalist id={`${id}-names`}>
          {choice.names.map((name) => (
            <option key={name} value={name} />
          ))}
        </datalist>
      )}
    </Field>
  );
}
