/**
 * The report's chart, as a self-contained SVG written by hand (no plotting dependency): grouped bars
 * on a log scale for the listing and the export, lines for write throughput, bars for the
 * exporter's peak memory against its limit.
 */

import { MB, sizeLabel } from './format.mjs';

const COLORS = {
  limit: '#8c8c8c',
  rxs: '#1f6feb',
  baseline: '#d9480f',
  baseline2: '#f59f00',
  target: '#2b8a3e',
};
const FONT = 'font-family="system-ui, -apple-system, Segoe UI, sans-serif"';

const esc = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceLogTicks(lo, hi) {
  const ticks = [];
  for (let e = Math.floor(Math.log10(lo)); e <= Math.ceil(Math.log10(hi)); e++) ticks.push(10 ** e);
  return ticks;
}

const fmtTick = (v, unit) => {
  if (unit === 's') return v >= 1 ? `${v} s` : `${v * 1000} ms`;
  return `${v}`;
};

/** Grouped bars, log y. groups: [{label, bars: [{series, value}]}]; series: [{key, label, color}]. */
function barPanel({ x, y, w, h, title, groups, series, unit, linear, targetLine }) {
  const out = [];
  const values = groups.flatMap((g) => g.bars.map((b) => b.value)).filter((v) => v > 0);
  out.push(`<text x="${x}" y="${y - 8}" font-size="14" font-weight="600" ${FONT}>${esc(title)}</text>`);
  if (values.length === 0) {
    out.push(
      `<text x="${x + w / 2}" y="${y + h / 2}" text-anchor="middle" font-size="12" ${FONT}>no data</text>`,
    );
    return out.join('\n');
  }
  let lo;
  let hi;
  let ticks;
  let scale;
  if (linear) {
    lo = 0;
    hi = Math.max(...values, targetLine?.value ?? 0) * 1.15;
    const step = 10 ** Math.floor(Math.log10(hi / 2));
    const stepN = Math.ceil(hi / step / 5) * step;
    ticks = [];
    for (let t = 0; t <= hi; t += stepN) ticks.push(t);
    scale = (v) => y + h - (v / hi) * h;
  } else {
    lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
    hi = 10 ** Math.ceil(Math.log10(Math.max(...values) * 1.01));
    ticks = niceLogTicks(lo, hi);
    scale = (v) =>
      y + h - ((Math.log10(Math.max(v, lo)) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * h;
  }
  for (const t of ticks) {
    const ty = scale(t);
    out.push(`<line x1="${x}" x2="${x + w}" y1="${ty}" y2="${ty}" stroke="#e5e5e5"/>`);
    out.push(
      `<text x="${x - 6}" y="${ty + 4}" text-anchor="end" font-size="11" fill="#555" ${FONT}>${esc(fmtTick(t, unit))}</text>`,
    );
  }
  out.push(`<line x1="${x}" x2="${x + w}" y1="${y + h}" y2="${y + h}" stroke="#333"/>`);
  const groupW = w / groups.length;
  const barW = Math.min(28, (groupW * 0.8) / series.length);
  groups.forEach((g, gi) => {
    const gx = x + gi * groupW + (groupW - barW * series.length) / 2;
    series.forEach((s, si) => {
      const bar = g.bars.find((b) => b.series === s.key);
      const bx = gx + si * barW;
      if (!bar || !(bar.value > 0)) {
        out.push(
          `<text x="${bx + barW / 2}" y="${y + h - 4}" text-anchor="middle" font-size="9" fill="#999" ${FONT}>n/a</text>`,
        );
        return;
      }
      const by = scale(bar.value);
      out.push(
        `<rect x="${bx + 1}" y="${by}" width="${barW - 2}" height="${y + h - by}" fill="${s.color}"><title>${esc(`${s.label}, ${g.label}: ${bar.text ?? bar.value}`)}</title></rect>`,
      );
      if (bar.text) {
        out.push(
          `<text x="${bx + barW / 2}" y="${by - 3}" text-anchor="middle" font-size="9" fill="#333" ${FONT}>${esc(bar.text)}</text>`,
        );
      }
    });
    out.push(
      `<text x="${x + gi * groupW + groupW / 2}" y="${y + h + 16}" text-anchor="middle" font-size="12" ${FONT}>${esc(g.label)}</text>`,
    );
  });
  if (targetLine) {
    const ty = scale(targetLine.value);
    out.push(
      `<line x1="${x}" x2="${x + w}" y1="${ty}" y2="${ty}" stroke="${COLORS.target}" stroke-dasharray="6 4" stroke-width="1.5"/>`,
    );
    out.push(
      `<text x="${x + 4}" y="${ty - 4}" font-size="11" fill="${COLORS.target}" ${FONT}>${esc(targetLine.label)}</text>`,
    );
  }
  return out.join('\n');
}

/** Lines, log y: series [{key,label,color,points:[{x,y}]}] with categorical x. */
function linePanel({ x, y, w, h, title, xs, series, xLabel }) {
  const out = [];
  out.push(`<text x="${x}" y="${y - 8}" font-size="14" font-weight="600" ${FONT}>${esc(title)}</text>`);
  const values = series.flatMap((s) => s.points.map((p) => p.y)).filter((v) => v > 0);
  if (values.length === 0 || xs.length === 0) {
    out.push(
      `<text x="${x + w / 2}" y="${y + h / 2}" text-anchor="middle" font-size="12" ${FONT}>no data</text>`,
    );
    return out.join('\n');
  }
  const lo = 10 ** Math.floor(Math.log10(Math.min(...values)));
  const hi = 10 ** Math.ceil(Math.log10(Math.max(...values) * 1.01));
  const scale = (v) => y + h - ((Math.log10(v) - Math.log10(lo)) / (Math.log10(hi) - Math.log10(lo))) * h;
  const px = (i) => x + (xs.length === 1 ? w / 2 : (i / (xs.length - 1)) * w * 0.9 + w * 0.05);
  for (const t of niceLogTicks(lo, hi)) {
    const ty = scale(t);
    out.push(`<line x1="${x}" x2="${x + w}" y1="${ty}" y2="${ty}" stroke="#e5e5e5"/>`);
    out.push(
      `<text x="${x - 6}" y="${ty + 4}" text-anchor="end" font-size="11" fill="#555" ${FONT}>${t}</text>`,
    );
  }
  out.push(`<line x1="${x}" x2="${x + w}" y1="${y + h}" y2="${y + h}" stroke="#333"/>`);
  xs.forEach((v, i) =>
    out.push(
      `<text x="${px(i)}" y="${y + h + 16}" text-anchor="middle" font-size="12" ${FONT}>${esc(v)}</text>`,
    ),
  );
  out.push(
    `<text x="${x + w / 2}" y="${y + h + 32}" text-anchor="middle" font-size="11" fill="#555" ${FONT}>${esc(xLabel)}</text>`,
  );
  for (const s of series) {
    const pts = s.points.filter((p) => p.y > 0).map((p) => [px(xs.indexOf(p.x)), scale(p.y)]);
    if (pts.length === 0) continue;
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2" ${s.dash ? `stroke-dasharray="${s.dash}"` : ''} points="${pts.map((p) => p.join(',')).join(' ')}"/>`,
    );
    for (const [cx, cy] of pts) out.push(`<circle cx="${cx}" cy="${cy}" r="3" fill="${s.color}"/>`);
  }
  return out.join('\n');
}

function legend(x, y, items) {
  let cx = x;
  const out = [];
  for (const item of items) {
    out.push(`<rect x="${cx}" y="${y - 10}" width="12" height="12" fill="${item.color}"/>`);
    out.push(`<text x="${cx + 16}" y="${y}" font-size="12" ${FONT}>${esc(item.label)}</text>`);
    cx += 40 + item.label.length * 7.2;
  }
  return out.join('\n');
}

const fmtS = (s) =>
  s === undefined ? undefined : s >= 1 ? `${s.toFixed(2)} s` : `${(s * 1000).toFixed(0)} ms`;

export function renderChart(results) {
  const sizes = results.sizes;
  const W = 1100;
  const H = 760;
  const parts = [];
  parts.push(`<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}">`);
  parts.push(`<rect width="${W}" height="${H}" fill="#fff"/>`);
  parts.push(
    `<text x="20" y="28" font-size="18" font-weight="700" ${FONT}>RXS benchmarks: ${esc(results.environment.date.slice(0, 10))}, ${esc(results.environment.cores)} cores, Node ${esc(results.environment.node)}</text>`,
  );
  parts.push(
    legend(20, 54, [
      { label: 'transfer limit', color: COLORS.limit },
      { label: 'limit via RXS', color: '#c4c4c4' },
      { label: 'RXS', color: COLORS.rxs },
      { label: 'json-server / curl | jq', color: COLORS.baseline },
      { label: 'json-server in memory', color: COLORS.baseline2 },
      { label: 'target', color: COLORS.target },
    ]),
  );

  const listingGroups = sizes.map((s) => ({
    label: `${sizeLabel(s.size)} records`,
    bars: [
      { series: 'limit', value: s.listing?.median?.limit, text: fmtS(s.listing?.median?.limit) },
      { series: 'rxs', value: s.listing?.median?.rxs, text: fmtS(s.listing?.median?.rxs) },
      { series: 'baseline', value: s.listing?.median?.jsonServer, text: fmtS(s.listing?.median?.jsonServer) },
    ],
  }));
  parts.push(
    barPanel({
      x: 80,
      y: 100,
      w: 430,
      h: 230,
      unit: 's',
      title: '1. GET /records/ of one topic (time, log scale)',
      groups: listingGroups,
      series: [
        { key: 'limit', label: 'transfer limit', color: COLORS.limit },
        { key: 'rxs', label: 'RXS', color: COLORS.rxs },
        { key: 'baseline', label: 'json-server', color: COLORS.baseline },
      ],
    }),
  );

  const exportGroups = sizes.map((s) => ({
    label: `${sizeLabel(s.size)} records`,
    bars: [
      { series: 'limit', value: s.export?.median?.limit, text: fmtS(s.export?.median?.limit) },
      { series: 'limitRxs', value: s.export?.median?.limitRxs, text: fmtS(s.export?.median?.limitRxs) },
      { series: 'rxs', value: s.export?.median?.rxs, text: fmtS(s.export?.median?.rxs) },
      { series: 'baseline', value: s.export?.median?.jq, text: fmtS(s.export?.median?.jq) },
    ],
  }));
  parts.push(
    barPanel({
      x: 630,
      y: 100,
      w: 430,
      h: 230,
      unit: 's',
      title: '2. Export to CSV (time, log scale)',
      groups: exportGroups,
      series: [
        { key: 'limit', label: 'curl + JSON.parse', color: COLORS.limit },
        { key: 'limitRxs', label: 'curl from RXS + JSON.parse', color: '#c4c4c4' },
        { key: 'rxs', label: 'rxs export', color: COLORS.rxs },
        { key: 'baseline', label: 'curl | jq', color: COLORS.baseline },
      ],
    }),
  );

  // Writes: throughput against concurrency at the largest size where json-server ran.
  // Writes: at 100k records if measured, else the largest size where json-server could run.
  const withBaseline = (s) => s.writes?.levels?.some((l) => l.jsonServer || l.jsonServerMemory);
  const writeSize =
    sizes.find((s) => s.size === 100_000 && withBaseline(s)) ??
    [...sizes].reverse().find(withBaseline) ??
    [...sizes].reverse().find((s) => s.writes?.levels?.length) ??
    sizes.at(-1);
  const levels = writeSize?.writes?.levels ?? [];
  const xs = levels.map((l) => String(l.connections));
  parts.push(
    linePanel({
      x: 80,
      y: 420,
      w: 430,
      h: 230,
      title: `4. POST /records/ at ${writeSize ? sizeLabel(writeSize.size) : '?'} records (requests/s, log scale)`,
      xLabel: 'concurrent connections',
      xs,
      series: [
        {
          key: 'rxs',
          color: COLORS.rxs,
          points: levels.map((l) => ({ x: String(l.connections), y: l.rxs?.rps })),
        },
        {
          key: 'jsonServer',
          color: COLORS.baseline,
          points: levels.map((l) => ({ x: String(l.connections), y: l.jsonServer?.rps })),
        },
        {
          key: 'jsonServerMemory',
          color: COLORS.baseline2,
          dash: '5 3',
          points: levels.map((l) => ({ x: String(l.connections), y: l.jsonServerMemory?.rps })),
        },
      ],
    }),
  );

  const memGroups = sizes.map((s) => ({
    label: `${sizeLabel(s.size)} records`,
    bars: [
      {
        series: 'rxs',
        value: s.export?.maxPeakRss?.rxs ? s.export.maxPeakRss.rxs / MB : undefined,
        text: s.export?.maxPeakRss?.rxs ? `${(s.export.maxPeakRss.rxs / MB).toFixed(0)} MB` : undefined,
      },
      {
        series: 'server',
        value:
          s.listing?.memory?.peakAboveIdle !== undefined
            ? Math.max(0.5, s.listing.memory.peakAboveIdle / MB)
            : undefined,
        text:
          s.listing?.memory?.peakAboveIdle !== undefined
            ? `+${(s.listing.memory.peakAboveIdle / MB).toFixed(0)} MB`
            : undefined,
      },
    ],
  }));
  parts.push(
    barPanel({
      x: 630,
      y: 420,
      w: 430,
      h: 230,
      unit: 'MB',
      linear: true,
      title: 'Memory: exporter peak, server growth (MB)',
      groups: memGroups,
      series: [
        { key: 'rxs', label: 'rxs export peak RSS', color: COLORS.rxs },
        { key: 'server', label: 'server growth', color: '#74c0fc' },
      ],
      targetLine: { value: 150, label: 'exporter limit 150 MB' },
    }),
  );
  parts.push(
    `<text x="630" y="${H - 44}" font-size="11" fill="#555" ${FONT}>dark blue: rxs export peak RSS (limit 150 MB)</text>`,
  );
  parts.push(
    `<text x="630" y="${H - 30}" font-size="11" fill="#555" ${FONT}>light blue: server RSS above idle during GET /records/ (limit 100 MB)</text>`,
  );
  parts.push(
    `<text x="20" y="${H - 14}" font-size="11" fill="#555" ${FONT}>Medians of several runs; each ratio in the report is a median of ratios taken within one round.</text>`,
  );
  parts.push('</svg>');
  return `${parts.join('\n')}\n`;
}
