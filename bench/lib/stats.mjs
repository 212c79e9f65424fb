/** Small statistics helpers. Every figure in the report is a median of several runs. */

/** The median of the finite numbers in `values` (undefined when there are none). */
export function median(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v)).sort((a, b) => a - b);
  if (xs.length === 0) return undefined;
  const mid = xs.length >> 1;
  return xs.length % 2 ? xs[mid] : (xs[mid - 1] + xs[mid]) / 2;
}

export function max(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  return xs.length ? Math.max(...xs) : undefined;
}

export function min(values) {
  const xs = values.filter((v) => typeof v === 'number' && Number.isFinite(v));
  return xs.length ? Math.min(...xs) : undefined;
}

/** Per-round ratios a[i] / b[i]: both figures of a ratio always come from the same round. */
export function ratios(a, b) {
  const out = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) {
    if (Number.isFinite(a[i]) && Number.isFinite(b[i]) && b[i] > 0) out.push(a[i] / b[i]);
  }
  return out;
}

/** Seconds since `start` (a process.hrtime.bigint()). */
export function secondsSince(start) {
  return Number(process.hrtime.bigint() - start) / 1e9;
}
