/**
 * Which released baseline a document's change summary compares with. Import-free (structural
 * types), so the CLI and the server share one rule without loading the schemas.
 */

/** What the rule reads of a baseline (the contract's `Baseline` fits). */
export interface BaselineReleaseShape {
  _id: string;
  /** ISO 8601: the moment the baseline fixes. */
  at: string;
  status: string;
  supersedes: string | null;
}

/**
 * The released baseline before `of`: the one `of` supersedes when that one is released, else the
 * released baseline with the latest moment before `of`'s (never `of` itself). Without `of` (a
 * document of the records as they are now), the released baseline with the latest moment.
 * Moments compare as instants, so offsets other than Z order correctly.
 */
export function previousReleasedBaseline<T extends BaselineReleaseShape>(
  baselines: Iterable<T>,
  of?: BaselineReleaseShape,
): T | undefined {
  const released = [...baselines].filter((b) => b.status === 'released' && b._id !== of?._id);
  if (of?.supersedes) {
    const superseded = released.find((b) => b._id === of.supersedes);
    if (superseded) return superseded;
  }
  const limit = of === undefined ? Infinity : Date.parse(of.at);
  let best: T | undefined;
  for (const baseline of released) {
    const moment = Date.parse(baseline.at);
    if (!(moment < limit)) continue;
    if (best === undefined || moment > Date.parse(best.at)) best = baseline;
  }
  return best;
}
