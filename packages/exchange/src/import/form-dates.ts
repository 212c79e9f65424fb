/**
 * Dates and date-times of a file as a form's datetime component stores them. A date field holds a
 * calendar date ("2026-03-01"): a date-time given to it (a ReqIF xsd:dateTime, an ISO date-time in
 * a CSV or XLSX cell) becomes the date it states in its own offset, as the person who wrote it saw
 * it; converted to UTC, "2026-03-01T23:30:00-05:00" would be a day later. A datetime field keeps
 * the time and offset, without the zero seconds an export adds.
 */

/** An ISO 8601 date-time: date, time of day (seconds and fraction optional), offset optional. */
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

export interface FormDate {
  value: string;
  /** A date-time given to a date field: `value` is its calendar date in the offset it states. */
  fromDateTime?: true;
}

/** `text` as a datetime component of `subtype` stores it; text that is no ISO date-time stays as it is. */
export function formDate(text: string, subtype: unknown): FormDate {
  const match = DATE_TIME.exec(text.trim());
  if (!match) return { value: text };
  const [, date = '', hours = '', minutes = '', seconds, fraction, offset] = match;
  if (Number(hours) > 23 || Number(minutes) > 59) return { value: text };
  if (subtype === 'date') {
    // Midnight without an offset is how an export writes a date alone: the date, nothing converted.
    const midnight = [hours, minutes, seconds ?? '0', fraction ?? '0'].every((part) => Number(part) === 0);
    return midnight && offset === undefined ? { value: date } : { value: date, fromDateTime: true };
  }
  if (subtype === 'datetime' && seconds === '00' && fraction === undefined)
    return { value: `${date}T${hours}:${minutes}${offset ?? ''}` };
  return { value: text };
}

/** A date-time a row gave a date field, and the date it became. */
export interface DateOfDateTime {
  /** The field, as a note names it: `"Due" (due)`. */
  field: string;
  given: string;
  date: string;
}

/** The date-times each date field took as dates, for one note a field in the report. */
export class DatesOfDateTimes {
  private readonly byField = new Map<string, { count: number; first: DateOfDateTime }>();

  add(converted: DateOfDateTime): void {
    const entry = this.byField.get(converted.field);
    if (entry) entry.count++;
    else this.byField.set(converted.field, { count: 1, first: converted });
  }

  notes(): string[] {
    return [...this.byField].map(([field, { count, first }]) => {
      const what =
        count === 1
          ? '1 date-time was converted to its date in its own offset'
          : `${count} date-times were converted to their dates in their own offsets`;
      return `${field} is a date field: ${what}, not in UTC (${first.given} became ${first.date}); the time of day is not kept.`;
    });
  }
}
