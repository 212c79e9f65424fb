import { describe, expect, it } from 'vitest';
import { formDate } from './form-dates.js';

describe('formDate', () => {
  it('a date field takes the calendar date a date-time states, in its own offset', () => {
    expect(formDate('2026-03-01T23:30:00-05:00', 'date')).toEqual({
      value: '2026-03-01',
      fromDateTime: true,
    });
    expect(formDate('2026-03-02T01:15:00+09:00', 'date')).toEqual({
      value: '2026-03-02',
      fromDateTime: true,
    });
    expect(formDate('2026-03-03T23:59:59.5Z', 'date')).toEqual({ value: '2026-03-03', fromDateTime: true });
    expect(formDate('2026-03-04T08:00', 'date')).toEqual({ value: '2026-03-04', fromDateTime: true });
  });

  it('midnight without an offset is a date alone, as an export writes it: nothing to say', () => {
    expect(formDate('2026-03-01T00:00:00', 'date')).toEqual({ value: '2026-03-01' });
    expect(formDate('2026-03-01T00:00:00.000', 'date')).toEqual({ value: '2026-03-01' });
    expect(formDate('2026-03-01', 'date')).toEqual({ value: '2026-03-01' });
  });

  it('a datetime field keeps the time and offset, without zero seconds', () => {
    expect(formDate('2026-03-01T23:30:00-05:00', 'datetime')).toEqual({ value: '2026-03-01T23:30-05:00' });
    expect(formDate('2026-03-01T23:30:15Z', 'datetime')).toEqual({ value: '2026-03-01T23:30:15Z' });
  });

  it('what is no date-time, or no time of day, stays as it is', () => {
    expect(formDate('next Tuesday', 'date')).toEqual({ value: 'next Tuesday' });
    expect(formDate('2026-03-01T25:00:00Z', 'date')).toEqual({ value: '2026-03-01T25:00:00Z' });
    expect(formDate('2026-03-01T10:00:00Z', 'time')).toEqual({ value: '2026-03-01T10:00:00Z' });
  });
});
