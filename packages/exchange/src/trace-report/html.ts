import { coverageMatrix, MATRIX_SUSPECT, ruleName } from './coverage.js';
import type { CoverageReport, RuleCoverage } from './coverage-types.js';

/**
 * The traceability report as one self-contained HTML file: inline style, no script, no request to
 * any server to view it, readable on paper. A coverage bar per rule, then per rule the records not
 * linked, the orphans and the matrix of source against target records (uncovered rows marked). A
 * matrix larger than MAX_MATRIX_CELLS is shown as a list of links instead.
 */

const STYLE = `
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1b1f24;margin:2rem auto;max-width:70rem;padding:0 1rem}
h1{font-size:1.6rem;margin:0 0 .25rem}h2{font-size:1.2rem;margin:2rem 0 .5rem;border-bottom:1px solid #d0d7de;padding-bottom:.25rem}
.meta{color:#57606a;margin:0 0 1.5rem}
table{border-collapse:collapse;margin:.5rem 0}th,td{border:1px solid #d0d7de;padding:.25rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{background:#f6f8fa}td.num{text-align:right;font-variant-numeric:tabular-nums}
.bar{position:relative;width:16rem;height:1rem;background:#f1f3f5;border:1px solid #d0d7de}
.bar span{position:absolute;left:0;top:0;bottom:0;background:#2da44e}.bar.fail span{background:#cf222e}
.fail-text{color:#cf222e;font-weight:600}.ok-text{color:#1a7f37;font-weight:600}
.matrix td{text-align:center;min-width:1.5rem}.matrix th.col{writing-mode:vertical-rl;transform:rotate(180deg);white-space:nowrap}
tr.uncovered th,tr.uncovered td{background:#fff1f0}td.suspect{background:#fff8c5;color:#7d4e00;font-weight:600}
ul.ids{columns:3 12rem;margin:.25rem 0;padding-left:1.25rem}
@media print{body{margin:0;max-width:none}h2{break-after:avoid}table,.bar{break-inside:avoid}.bar span{print-color-adjust:exact;-webkit-print-color-adjust:exact}}
`;

const escape = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );

export function coverageHtml(
  report: CoverageReport,
  options: { failUnder?: number; generatedAt?: string; title?: string } = {},
): string {
  const { failUnder } = options;
  const failing = (r: RuleCoverage) => failUnder !== undefined && r.percent < failUnder;
  const title = options.title ?? 'Traceability report';
  const parts: string[] = [
    '<!DOCTYPE html>',
    '<html lang="en"><head><meta charset="utf-8">',
    // Nothing may be fetched from anywhere: the file is the whole report.
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">`,
    '<meta name="viewport" content="width=device-width, initial-scale=1">',
    `<title>${escape(title)}</title><style>${STYLE}</style></head><body>`,
    `<h1>${escape(title)}</h1>`,
    `<p class="meta">Topics: ${report.topics.map((t) => `${escape(t.name)} (revision ${escape(t.revisionId)})`).join(', ') || 'none'}${options.generatedAt ? ` · the data as of ${escape(options.generatedAt)}` : ''}${failUnder !== undefined ? ` · gate: ${failUnder}%` : ''}</p>`,
  ];
  if (report.rules.length === 0) {
    parts.push(
      '<p>No rule: give at least two topics, or a mapping file with links between them.</p></body></html>',
    );
    return parts.join('\n');
  }
  parts.push(
    '<h2>Coverage</h2><table><thead><tr><th>rule</th><th>coverage</th><th></th><th>linked</th><th>not linked</th><th>orphans</th><th>suspect links</th></tr></thead><tbody>',
  );
  for (const r of report.rules) {
    parts.push(
      `<tr><td>${escape(ruleName(r.rule))}</td>` +
        `<td><div class="bar${failing(r) ? ' fail' : ''}" role="img" aria-label="${r.percent.toFixed(1)}%"><span style="width:${r.percent.toFixed(2)}%"></span></div></td>` +
        `<td class="num ${failing(r) ? 'fail-text' : 'ok-text'}">${r.percent.toFixed(1)}%</td>` +
        `<td class="num">${r.covered} of ${r.total}</td><td class="num">${r.uncovered.length}</td><td class="num">${r.orphans.length}</td><td class="num">${r.suspect.length}</td></tr>`,
    );
  }
  parts.push('</tbody></table>');
  for (const r of report.rules) parts.push(ruleSection(r));
  parts.push('</body></html>', '');
  return parts.join('\n');
}

function ruleSection(r: RuleCoverage): string {
  const source = escape(r.rule.source.name);
  const target = escape(r.rule.target.name);
  const out = [`<h2>${escape(ruleName(r.rule))}</h2>`];
  out.push(
    r.uncovered.length === 0
      ? `<p>Every record of ${source} is linked.</p>`
      : `<p class="fail-text">Not linked (${r.uncovered.length}):</p><ul class="ids">${r.uncovered.map((id) => `<li>${escape(id)}</li>`).join('')}</ul>`,
  );
  out.push(
    r.orphans.length === 0
      ? `<p>Every record of ${target} is linked from ${source}.</p>`
      : `<p>Orphans of ${target} (${r.orphans.length}):</p><ul class="ids">${r.orphans.map((id) => `<li>${escape(id)}</li>`).join('')}</ul>`,
  );
  if (r.suspect.length > 0)
    out.push(
      `<p>Suspect links (${r.suspect.length}), a record changed since the link was reviewed (${MATRIX_SUSPECT} in the matrix):</p><ul class="ids">${r.suspect.map(([s, t]) => `<li>${escape(s)} → ${escape(t)}</li>`).join('')}</ul>`,
    );
  const matrix = coverageMatrix(r);
  if (matrix) {
    const uncovered = new Set(r.uncovered);
    out.push(
      `<table class="matrix"><thead><tr><th>${source} \\ ${target}</th>${matrix.columns.map((c) => `<th class="col">${escape(c)}</th>`).join('')}</tr></thead><tbody>`,
    );
    for (const row of matrix.rows)
      out.push(
        `<tr${uncovered.has(row) ? ' class="uncovered"' : ''}><th>${escape(row)}</th>${matrix.columns
          .map((c) => {
            const shown = matrix.cell(row, c);
            return shown === MATRIX_SUSPECT
              ? `<td class="suspect" title="suspect">${shown}</td>`
              : `<td>${shown}</td>`;
          })
          .join('')}</tr>`,
      );
    out.push('</tbody></table>');
  } else if (r.links.length > 0) {
    const suspect = new Set(r.suspect.map(([s, t]) => `${s}\u0000${t}`));
    out.push(`<table><thead><tr><th>${source}</th><th>${target}</th><th>suspect</th></tr></thead><tbody>`);
    for (const [s, t] of r.links)
      out.push(
        `<tr><td>${escape(s)}</td><td>${escape(t)}</td><td>${suspect.has(`${s}\u0000${t}`) ? MATRIX_SUSPECT : ''}</td></tr>`,
      );
    out.push('</tbody></table>');
  }
  return out.join('\n');
}
