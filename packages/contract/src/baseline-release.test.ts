import { describe, expect, it } from 'vitest';
import { previousReleasedBaseline } from './baseline-release.js';

const b = (id: string, at: string, status = 'released', supersedes: string | null = null) => ({
  _id: id,
  at,
  status,
  supersedes,
});

describe('previousReleasedBaseline', () => {
  const v1 = b('v1', '2026-01-01T00:00:00Z');
  const v2 = b('v2', '2026-02-01T00:00:00Z');
  const draft = b('d', '2026-02-15T00:00:00Z', 'proposed');
  const refused = b('r', '2026-02-20T00:00:00Z', 'refused');

  it('takes the released baseline with the latest moment before the one documented', () => {
    expect(
      previousReleasedBaseline([v2, v1, draft, refused], b('v3', '2026-03-01T00:00:00Z', 'proposed')),
    ).toBe(v2);
    expect(previousReleasedBaseline([v1, v2], b('x', '2026-01-15T00:00:00Z'))?._id).toBe('v1');
  });

  it('prefers the released baseline the documented one supersedes', () => {
    expect(previousReleasedBaseline([v1, v2], b('v3', '2026-03-01T00:00:00Z', 'proposed', 'v1'))).toBe(v1);
    // A superseded baseline that is not released is no comparison: the rule by moment applies.
    expect(previousReleasedBaseline([v1, v2, draft], b('v3', '2026-03-01T00:00:00Z', 'proposed', 'd'))).toBe(
      v2,
    );
  });

  it('never compares a baseline with itself, nor with one of the same or a later moment', () => {
    expect(previousReleasedBaseline([v1], v1)).toBeUndefined();
    expect(previousReleasedBaseline([v1, v2], b('x', '2026-01-01T00:00:00Z'))).toBeUndefined();
  });

  it('orders moments as instants, whatever their offset', () => {
    const early = b('e', '2026-01-01T10:00:00+05:00'); // 05:00Z
    const late = b('l', '2026-01-01T06:00:00Z');
    expect(previousReleasedBaseline([late, early], b('x', '2026-01-01T07:00:00Z'))).toBe(late);
  });

  it('for a document of now takes the latest released baseline, and none without one', () => {
    expect(previousReleasedBaseline([v1, v2, draft])).toBe(v2);
    expect(previousReleasedBaseline([draft, refused])).toBeUndefined();
  });
});
