import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { XmlSections } from '../src/import/limits.js';
import { ImportFileError, openRowSource, type OpenSourceOptions, type SourceRow } from '../src/index.js';
import {
  billionLaughs,
  deepHierarchy,
  declareEntrySize,
  deepXhtml,
  externalDtd,
  externalEntity,
  hugeAttributeValue,
  hugeJoinedText,
  hugeSection,
  hugeXhtmlValue,
  manyAttributeDefinitions,
  manyEnumValues,
  manySpecTypes,
  manyValues,
  parameterEntity,
  reqifzBomb,
  undeclaredEntity,
  writeChunks,
} from './support/hostile-reqif.js';

/**
 * Hostile ReqIF files (.reqif, .reqifz) as `rxs import` reads them, with the import's default
 * limits: each is refused with a message that says what is wrong and what to do, after a time and
 * memory in proportion to the limits, never to what the file holds or claims. No entity is
 * resolved: nothing of another file or address reaches a row or a message, and nothing is fetched.
 */
const dir = mkdtempSync(join(tmpdir(), 'rxs-reqif-hostile-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const MiB = 1024 * 1024;

/** Writes the document's chunks to a file of the scratch folder. */
async function written(name: string, chunks: Iterable<string | Buffer>): Promise<string> {
  const file = join(dir, name);
  await writeChunks(file, chunks);
  return file;
}

interface Refusal {
  error: ImportFileError;
  /** Milliseconds the reading took. */
  ms: number;
  /** The highest RSS while reading, above the RSS before, in MiB. */
  growth: number;
}

/** Reads the file to its end, expecting an ImportFileError: it, the time taken and the memory it cost. */
async function refusal(file: string, options: OpenSourceOptions = {}): Promise<Refusal> {
  const before = process.memoryUsage().rss;
  let peak = before;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 5);
  const start = performance.now();
  const rows: SourceRow[] = [];
  try {
    for await (const row of openRowSource(file, options).rows()) rows.push(row);
  } catch (error) {
    if (!(error instanceof ImportFileError)) throw error;
    peak = Math.max(peak, process.memoryUsage().rss);
    return { error, ms: performance.now() - start, growth: (peak - before) / MiB };
  } finally {
    clearInterval(sampler);
  }
  throw new Error(`${file} was read: ${JSON.stringify(rows.map((row) => row.facts)).slice(0, 500)}`);
}

const DOCTYPE_REFUSED = (file: string) =>
  `${file} declares a DOCTYPE (<!DOCTYPE …>): RXS reads no DTD and expands no entity one declares, and a ReqIF file needs neither. Export the file again without a DOCTYPE, or delete the declaration from it.`;

describe('entities: no DTD is read, no entity resolved, nothing fetched', () => {
  /** A file an entity names: its text must never reach a row or a message. */
  const secret = `RXS-SECRET-${randomBytes(8).toString('hex')}`;
  const secretFile = join(dir, 'secret.txt');
  let requests = 0;
  let server: Server;
  let address: string;

  beforeAll(async () => {
    writeFileSync(secretFile, `${secret}\n`);
    server = createServer((_request, response) => {
      requests++;
      response.end(`<!ENTITY leak "${secret}">`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    address = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('refuses an external entity naming a file (XXE) at its DOCTYPE: the file is never read', async () => {
    const file = await written('xxe-file.reqif', externalEntity(`file://${secretFile}`));
    const { error, ms } = await refusal(file);
    expect(error.message).toBe(DOCTYPE_REFUSED(file));
    expect(error.exceeded).toBeUndefined();
    expect(error.message).not.toContain(secret);
    expect(ms).toBeLessThan(2000);
  });

  it('refuses a parameter entity, an entity naming an http address and an external DTD; no request is made', async () => {
    for (const [name, chunks] of [
      ['xxe-parameter-file.reqif', parameterEntity(`file://${secretFile}`)],
      ['xxe-parameter-http.reqif', parameterEntity(`${address}/entities.dtd`)],
      ['xxe-http.reqif', externalEntity(`${address}/secret`)],
      ['external-dtd.reqif', externalDtd(`${address}/reqif.dtd`)],
    ] as const) {
      const file = await written(name, chunks);
      const { error } = await refusal(file);
      expect(error.message, name).toBe(DOCTYPE_REFUSED(file));
      expect(error.message).not.toContain(secret);
    }
    expect(requests).toBe(0);
  });

  it('refuses billion laughs (1 KB declaring 3 GB of entities) at once, naming the DOCTYPE, memory flat', async () => {
    const file = await written('billion-laughs.reqif', billionLaughs());
    const { error, ms, growth } = await refusal(file);
    expect(error.message).toBe(DOCTYPE_REFUSED(file));
    expect(ms).toBeLessThan(2000);
    expect(growth).toBeLessThan(50);
  });

  it('an entity without a DOCTYPE is an undefined entity, where it stands', async () => {
    const file = await written('undeclared.reqif', undeclaredEntity());
    const { error } = await refusal(file);
    expect(error.message).toMatch(
      new RegExp(
        `^${file} is not well-formed XML at line \\d+, column \\d+: undefined entity \\(XML knows only &amp;`,
      ),
    );
  });

  it('finds a DOCTYPE split over chunks of any size, and none in a comment, a CDATA section or an instruction', () => {
    const check = (text: string, size: number) => {
      const sections = new XmlSections(1000);
      for (let at = 0; at < text.length; at += size) {
        const found = sections.check(text.slice(at, at + size));
        if (found) return found;
      }
      return undefined;
    };
    const hidden =
      '<?xml version="1.0"?><!-- <!DOCTYPE a> --><?pi <!DOCTYPE b> ?><R><![CDATA[<!DOCTYPE c>]]></R>';
    const declared = '<?xml version="1.0"?><!-- a comment --><!DOCTYPE R [<!ENTITY e "e">]><R>&e;</R>';
    for (let size = 1; size <= 12; size++) {
      expect(check(hidden, size), `chunks of ${size}`).toBeUndefined();
      expect(check(declared, size), `chunks of ${size}`).toBe('DOCTYPE');
      expect(check(`<R><!--${'<'.repeat(1001)}--></R>`, size)).toBe('comment');
      expect(check(`<R><![CDATA[${'<'.repeat(1000)}]]></R>`, size)).toBeUndefined();
    }
  });
});

describe('a zip bomb: a .reqifz of 1 GiB of ReqIF in a megabyte', () => {
  it('is refused from its directory at the default limit, and stopped as it inflates when it declares less', async () => {
    const bomb = join(dir, 'bomb.reqifz');
    const size = await reqifzBomb(bomb, 1025 * MiB);
    expect(size).toBeLessThan(8 * MiB);
    const declared = await refusal(bomb);
    expect(declared.error.exceeded).toMatchObject({
      limit: 'maxEntryBytes',
      value: 1024 * MiB,
      kind: 'size',
    });
    expect(declared.error.message).toBe(
      `bomb.reqif in the ReqIF archive ${bomb} unpacks to more than 1,024 MiB, the most one file of an archive may: export the requirements in several smaller files.`,
    );
    expect(declared.ms).toBeLessThan(5000);

    // Declaring 1 KB, it is counted as it inflates: stopped at the limit (lowered, as a web app's
    // RXS_WEB_IMPORT_UNZIPPED_MB does, to keep the test short) with memory flat.
    await declareEntrySize(bomb, 1024);
    const inflating = await refusal(bomb, { limits: { maxArchiveBytes: 64 * MiB } });
    expect(inflating.error.exceeded).toMatchObject({ limit: 'maxArchiveBytes', kind: 'size' });
    expect(inflating.error.message).toBe(
      `The ReqIF archive ${bomb} unpacks to more than 64 MiB, the most an archive may: export the requirements in several smaller files.`,
    );
    expect(inflating.growth).toBeLessThan(100);
  }, 60_000);
});

describe('values of 100 MB: stopped at the cell limit before the parser gathers them', () => {
  const CELL = 'more than 5 MiB of text, the most one cell may hold';

  it('a THE-VALUE attribute of 100 MB', async () => {
    const file = await written('huge-attribute.reqif', hugeAttributeValue(100 * MiB));
    const { error, ms, growth } = await refusal(file);
    expect(error.exceeded).toMatchObject({ limit: 'maxCellBytes', value: 5 * MiB, kind: 'shape' });
    expect(error.message).toMatch(new RegExp(`^A cell \\(${file}, after line \\d+\\) holds ${CELL}`));
    expect(ms).toBeLessThan(5000);
    expect(growth).toBeLessThan(80);
  }, 30_000);

  it('an XHTML value of 100 MB: one text, and words each in an element of their own', async () => {
    for (const marked of [false, true]) {
      const file = await written(`huge-xhtml-${marked}.reqif`, hugeXhtmlValue(100 * MiB, { marked }));
      const { error, ms, growth } = await refusal(file);
      expect(error.exceeded).toMatchObject({ limit: 'maxCellBytes', kind: 'shape' });
      expect(error.message).toContain(CELL);
      if (marked) expect(error.message).toContain(`A cell (${file}, spec object so-1) holds`);
      // A million elements parsed up to the limit, with the text they make: time and memory of the limit.
      expect(ms).toBeLessThan(marked ? 20_000 : 5000);
      expect(growth).toBeLessThan(80);
    }
  }, 30_000);

  it('a comment, CDATA section or processing instruction of 100 MB of "<", and a text joined over comments', async () => {
    for (const kind of ['comment', 'cdata', 'pi'] as const) {
      const file = await written(`huge-${kind}.reqif`, hugeSection(kind, 100 * MiB));
      const { error, ms, growth } = await refusal(file);
      expect(error.exceeded).toMatchObject({ limit: 'maxCellBytes', kind: 'shape' });
      const name = { comment: 'comment', cdata: 'CDATA section', pi: 'processing instruction' }[kind];
      expect(error.message).toMatch(
        new RegExp(
          `^${file} holds a ${name} of more than 5 MiB after line \\d+, more than any value may hold`,
        ),
      );
      expect(ms).toBeLessThan(5000);
      expect(growth).toBeLessThan(80);
    }
    const joined = await written('joined.reqif', hugeJoinedText(20 * MiB));
    const { error } = await refusal(joined);
    expect(error.exceeded).toMatchObject({ limit: 'maxCellBytes', kind: 'shape' });
    expect(error.message).toMatch(new RegExp(`^A cell \\(${joined}, line \\d+\\) holds ${CELL}`));
  }, 30_000);
});

describe('100,000 declarations or values: refused at their limit, named', () => {
  it('100,000 attribute definitions of a spec type: the column limit', async () => {
    const file = await written('many-attributes.reqif', manyAttributeDefinitions(100_000));
    const { error, ms } = await refusal(file);
    expect(error.exceeded).toMatchObject({ limit: 'maxColumns', value: 5000, kind: 'shape' });
    expect(error.message).toMatch(
      new RegExp(
        `^${file} has a spec type of more than 5,000 attribute definitions \\(line \\d+\\): an import reads at most 5,000 columns`,
      ),
    );
    expect(ms).toBeLessThan(3000);
  });

  it('100,000 enumeration values, or 100,000 spec object types: the definitions limit', async () => {
    for (const [name, chunks] of [
      ['many-enum-values.reqif', manyEnumValues(100_000)],
      ['many-spec-types.reqif', manySpecTypes(100_000)],
    ] as const) {
      const file = await written(name, chunks);
      const { error, ms } = await refusal(file);
      expect(error.exceeded, name).toMatchObject({ limit: 'maxDefinitions', value: 50_000, kind: 'size' });
      expect(error.message).toBe(
        `${file} declares more than 50,000 spec object types, attribute definitions and enumeration values, the most the import holds while it reads the spec objects. Export only the specification to import, with the types and attributes it uses.`,
      );
      expect(ms).toBeLessThan(5000);
    }
    // Below the limit, a file of many types names a few of them when it asks which to import.
    const some = await written('some-spec-types.reqif', manySpecTypes(1000));
    expect((await refusal(some)).error.message).toMatch(
      /has 1001 spec object types: "Requirement", "Type 0", .*"Type 18" and 981 more\. /,
    );
  }, 30_000);

  it('100,000 values in one spec object: the column limit', async () => {
    const file = await written('many-values.reqif', manyValues(100_000));
    const { error } = await refusal(file);
    expect(error.exceeded).toMatchObject({ limit: 'maxColumns', kind: 'shape' });
    expect(error.message).toContain(`The spec object so-1 of ${file} has more than 5,000 values`);
  });
});

describe('nesting 100,000 deep: refused at the depth limit, no stack overflow', () => {
  it('100,000 nested XHTML divisions, and a specification hierarchy 100,000 levels deep', async () => {
    for (const [name, chunks] of [
      ['deep-xhtml.reqif', deepXhtml(100_000)],
      ['deep-hierarchy.reqif', deepHierarchy(100_000)],
    ] as const) {
      const file = await written(name, chunks);
      const { error, ms, growth } = await refusal(file);
      expect(error.exceeded, name).toMatchObject({ limit: 'maxDepth', value: 1000, kind: 'shape' });
      expect(error.message).toMatch(
        new RegExp(`^${file} nests elements more than 1,000 deep at line \\d+, deeper than ReqIF tools nest`),
      );
      expect(ms).toBeLessThan(2000);
      expect(growth).toBeLessThan(50);
    }
  });

  it('reads a value nested just within the limit, in time in proportion to its depth', async () => {
    const file = await written('deep-enough.reqif', deepXhtml(900));
    const rows: SourceRow[] = [];
    for await (const row of openRowSource(file).rows()) rows.push(row);
    expect(rows.map((row) => [row.facts.name, row.values.get('ReqIF.Text')])).toEqual([
      ['Deep', { text: 'deep' }],
    ]);
  });
});
