import { unprocessable, validationItem } from './errors.js';

/**
 * ISO 8601 as RXS accepts it: a calendar date, or a date-time with minutes, optional seconds and
 * fraction, and an optional zone (none means UTC, as stored timestamps are).
 */
const ISO_DATE_TIME =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|z|[+-]\d{2}:?\d{2})?)?$/;

/** A date (whole day) or date-time as the ISO text stored timestamps compare against. */
export function parseIsoDate(value: string, loc: (string | number)[], edge: 'start' | 'end'): string {
  const invalid = (why: string) =>
    unprocessable([
      validationItem(
        loc,
        `"${value}" is not an ISO 8601 date or date-time${why}: use e.g. 2024-05-31 or 2024-05-31T12:00:00Z`,
        'datetime_parsing',
      ),
    ]);
  const match = ISO_DATE_TIME.exec(value);
  if (!match) throw invalid('');
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  // Date.UTC rolls 2020-02-30 over to March: a real calendar date reads back the same.
  const calendar = new Date(Date.UTC(y, mo - 1, d));
  calendar.setUTCFullYear(y);
  if (calendar.getUTCMonth() !== mo - 1 || calendar.getUTCDate() !== d) throw invalid(' (no such day)');
  if (hour !== undefined && (Number(hour) > 23 || Number(minute) > 59 || Number(second ?? 0) > 59))
    throw invalid(' (no such time)');
  const zoneText =
    zone === undefined || zone === 'z'
      ? 'Z'
      : zone.length === 5
        ? `${zone.slice(0, 3)}:${zone.slice(3)}`
        : zone;
  if (zoneText !== 'Z' && (Number(zoneText.slice(1, 3)) > 23 || Number(zoneText.slice(4)) > 59))
    throw invalid(' (no such zone offset)');
  const millis = (fraction ?? '.000').slice(1, 4).padEnd(3, '0');
  const text =
    hour === undefined
      ? `${year}-${month}-${day}T00:00:00.000Z`
      : `${year}-${month}-${day}T${hour}:${minute}:${second ?? '00'}.${millis}${zoneText}`;
  const parsed = Date.parse(text);
  if (Number.isNaN(parsed)) throw invalid('');
  const end = new Date(hour === undefined && edge === 'end' ? parsed + 86_400_000 - 1 : parsed);
  // Stored timestamps are compared as text, which holds only for four-digit years.
  const endYear = end.getUTCFullYear();
  if (endYear < 1 || endYear > 9999) {
    throw unprocessable([
      validationItem(loc, `"${value}" is outside the years 0001 to 9999`, 'datetime_range'),
    ]);
  }
  return end.toISOString();
}
