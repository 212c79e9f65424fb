import { describe, expect, it } from 'vitest';
import { keptOutline, outlineProblems, type OutlineEntryShape } from './outline-rules.js';

const id = (n: number) => n.toString(16).padStart(24, '0');
/** An outline from levels: record n at the n-th level given. */
const outline = (...levels: number[]): OutlineEntryShape[] =>
  levels.map((level, n) => ({ record_id: id(n), level }));
const shape = (entries: OutlineEntryShape[]) => entries.map((e) => `${parseInt(e.record_id, 16)}@${e.level}`);

describe('the rules of an outline', () => {
  it('accepts an outline that starts at level 1 and never skips a level going down', () => {
    expect(outlineProblems([])).toEqual([]);
    expect(outlineProblems(outline(1, 2, 3, 3, 1, 2, 1))).toEqual([]);
  });

  it('names each entry that starts below the top, skips a level, or repeats a record', () => {
    const entries = [...outline(2, 2, 4), { record_id: id(0), level: 3 }];
    const problems = outlineProblems(entries);
    expect(problems.map((p) => p.loc)).toEqual([
      ['body', 'entries', 0, 'level'],
      ['body', 'entries', 2, 'level'],
      ['body', 'entries', 3, 'record_id'],
    ]);
    expect(problems[0]!.msg).toBe('The first entry is at level 2; an outline starts at level 1.');
    expect(problems[1]!.msg).toMatch(/^Level 4 follows level 2: an entry is at most one level below/);
    expect(problems[2]!.msg).toBe(
      `Record ${id(0)} is already entries[0]; an outline names each record once.`,
    );
    expect(problems.every((p) => p.type === 'value_error')).toBe(true);
  });

  it('leaves entries out with their descendants one level up, so what remains is an outline', () => {
    // 0 ─ 1 ─ 2, 3 (siblings under 1); 4 ─ 5
    const entries = outline(1, 2, 3, 3, 1, 2);
    const without = (...left: number[]) =>
      shape(keptOutline(entries, (e) => !left.includes(parseInt(e.record_id, 16))));
    expect(without()).toEqual(['0@1', '1@2', '2@3', '3@3', '4@1', '5@2']);
    // 2 and 3 stay siblings, now under 0.
    expect(without(1)).toEqual(['0@1', '2@2', '3@2', '4@1', '5@2']);
    expect(without(0)).toEqual(['1@1', '2@2', '3@2', '4@1', '5@2']);
    expect(without(0, 1)).toEqual(['2@1', '3@1', '4@1', '5@2']);
    expect(without(4)).toEqual(['0@1', '1@2', '2@3', '3@3', '5@1']);
    expect(without(0, 1, 2, 3, 4, 5)).toEqual([]);
    for (const left of [[1], [0], [0, 1], [2, 4], [0, 4]])
      expect(outlineProblems(keptOutline(entries, (e) => !left.includes(parseInt(e.record_id, 16))))).toEqual(
        [],
      );
  });

  it('keeps the entries it keeps as they are, and never makes an outline of a wrong one worse', () => {
    const entries = outline(1, 2);
    const kept = keptOutline(entries, () => true);
    expect(kept[0]).toBe(entries[0]);
    // Stored before a rule was checked: a skipped level comes back closed.
    expect(shape(keptOutline(outline(1, 3, 5), () => true))).toEqual(['0@1', '1@2', '2@3']);
  });
});
