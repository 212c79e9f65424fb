import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { renderDocx } from '../src/document/docx.js';
import type { BaselineDocument, DocumentRecord } from '../src/document/model.js';
import { renderPdf } from '../src/document/pdf.js';
import { visibleText } from '../src/document/text.js';
import { recordHeading, recordName } from '../src/document/wording.js';
import { largeDocument } from './document-sample.js';

/** The renderers' own behaviour, without the programs that read their documents (document-readers.test.ts). */

/** A sink that counts bytes and keeps none. */
function sink(): Writable & { bytes: number } {
  const out = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.bytes += chunk.length;
      done();
    },
  }) as Writable & { bytes: number };
  out.bytes = 0;
  return out;
}

function emptyDocument(records: AsyncIterable<DocumentRecord> | DocumentRecord[] = []): BaselineDocument {
  return {
    tenant: 'Acme',
    subject: { kind: 'now', moment: '2026-08-11T09:30:00.000Z' },
    generatedAt: '2026-08-11T09:30:00.000Z',
    signatures: [],
    topics: [{ name: 'Empty', records }],
    matrices: [],
    coverage: [],
    changes: { against: undefined, changes: [] },
  };
}

const RENDERERS = [
  ['PDF', renderPdf],
  ['DOCX', renderDocx],
] as const;

describe.each(RENDERERS)('the %s renderer', (_name, render) => {
  it('renders a document without signatures, records, matrices or changes', async () => {
    const out = sink();
    await render(emptyDocument(), out);
    expect(out.bytes).toBeGreaterThan(1000);
  }, 60_000);

  it('rejects when the records fail, and does not end the output as if complete', async () => {
    async function* failing(): AsyncIterable<DocumentRecord> {
      yield { readableId: 'REQ-1', title: 'One', fields: [], links: [] };
      throw new Error('the record service went away');
    }
    const out = sink();
    await expect(render(emptyDocument(failing()), out)).rejects.toThrow('the record service went away');
    expect(out.writableEnded).toBe(false);
  }, 60_000);

  it('keeps its memory flat with the number of records', async () => {
    const heapAfter = async (count: number) => {
      let peak = 0;
      const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().heapUsed)), 20);
      await render(largeDocument(count), sink());
      clearInterval(timer);
      return peak;
    };
    const small = await heapAfter(200);
    const large = await heapAfter(2000);
    // Ten times the records must not take ten times the memory: records are written and let go.
    expect(large - small).toBeLessThan(64 * 1024 * 1024);
  }, 300_000);
});

describe('record names', () => {
  it('give the readable id once where the title begins with it, and keep an id that only shares its start', () => {
    expect(recordName('REQ_001', 'REQ_001 — Pump')).toBe('REQ_001 — Pump');
    expect(recordName('REQ_001', 'REQ_001')).toBe('REQ_001');
    expect(recordName('REQ_1', 'REQ_10 Pump')).toBe('REQ_1 REQ_10 Pump');
    expect(recordName('REQ_001', 'Pump')).toBe('REQ_001 Pump');
    expect(recordHeading('2.3', { readableId: 'REQ_001', title: 'REQ_001: Pump' })).toBe('2.3 REQ_001: Pump');
  });
});

describe('visible text', () => {
  it('keeps line breaks and tabs and marks what would not be seen', () => {
    expect(visibleText('a\r\nb\rc\td\u0000e\u200bf\ud800g\ufffe')).toBe(
      'a\nb\nc\td[U+0000]e\u200bf[U+D800]g[U+FFFE]',
    );
  });
});
