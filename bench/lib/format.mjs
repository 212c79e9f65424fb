/** How the report, its closing note and the chart write sizes and times. */

export const MB = 2 ** 20;

/** 10000 → "10k", 1000000 → "1M". */
export const sizeLabel = (n) => (n >= 1e6 ? `${n / 1e6}M` : n >= 1e3 ? `${n / 1e3}k` : String(n));

/** Seconds with three significant-ish digits: 0.123 s, 1.23 s, 12.3 s. */
export const secs = (s) =>
  s === undefined
    ? 'n/a'
    : s >= 10
      ? `${s.toFixed(1)} s`
      : s >= 1
        ? `${s.toFixed(2)} s`
        : `${s.toFixed(3)} s`;
