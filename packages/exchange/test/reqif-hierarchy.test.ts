import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ImportFileError, ImportLimitError, readSpecHierarchies, type SpecHierarchy } from '../src/index.js';

/**
 * readSpecHierarchies: each SPECIFICATION's SPEC-HIERARCHY depth-first, each entry at its level,
 * whatever order a file writes an entry's OBJECT and CHILDREN in, under the reader's limits. The
 * files of other tools are compared with StrictDoc's library in reqif-corpus.test.ts.
 */
const dir = mkdtempSync(join(tmpdir(), 'rxs-spec-hierarchy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reqif = (specifications: string, head = '') =>
  `<?xml version="1.0"?>${head}\n<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"><CORE-CONTENT><REQ-IF-CONTENT>\n` +
  `<SPECIFICATIONS>${specifications}</SPECIFICATIONS></REQ-IF-CONTENT></CORE-CONTENT></REQ-IF>`;
const specification = (identifier: string, longName: string | undefined, children: string) =>
  `<SPECIFICATION IDENTIFIER="${identifier}"${longName === undefined ? '' : ` LONG-NAME="${longName}"`}>` +
  `<TYPE><SPECIFICATION-TYPE-REF>ST</SPECIFICATION-TYPE-REF></TYPE><CHILDREN>${children}</CHILDREN></SPECIFICATION>`;
/** An entry as the ReqIF schema orders its elements: CHILDREN before OBJECT. */
const entry = (object: string, children = '') =>
  `<SPEC-HIERARCHY IDENTIFIER="H-${object}">${children && `<CHILDREN>${children}</CHILDREN>`}` +
  `<OBJECT><SPEC-OBJECT-REF>${object}</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY>\n`;
/** An entry as StrictDoc writes it: OBJECT before CHILDREN. */
const objectFirst = (object: string, children = '') =>
  `<SPEC-HIERARCHY IDENTIFIER="H-${object}"><OBJECT><SPEC-OBJECT-REF>${object}</SPEC-OBJECT-REF></OBJECT>` +
  `${children && `<CHILDREN>${children}</CHILDREN>`}</SPEC-HIERARCHY>\n`;

async function read(text: string, limits = {}): Promise<SpecHierarchy[]> {
  const file = join(dir, `f-${Math.random().toString(36).slice(2)}.reqif`);
  writeFileSync(file, text);
  const specifications: SpecHierarchy[] = [];
  for await (const found of readSpecHierarchies(file, { limits })) specifications.push(found);
  return specifications;
}

const levels = (...pairs: [string, number][]) => pairs.map(([object, level]) => ({ object, level }));

describe('readSpecHierarchies', () => {
  it('gives each SPECIFICATION its entries depth-first, each at its level, in either order of OBJECT and CHILDREN', async () => {
    const tree = (make: typeof entry) =>
      make('A', make('A1', make('A1a') + make('A1b')) + make('A2')) + make('B');
    const read1 = await read(
      reqif(
        specification('S-1', 'Requirements', tree(entry)) +
          specification('S-2', undefined, tree(objectFirst)) +
          specification('S-3', 'Empty', ''),
      ),
    );
    const depthFirst = levels(['A', 1], ['A1', 2], ['A1a', 3], ['A1b', 3], ['A2', 2], ['B', 1]);
    expect(read1).toEqual([
      { identifier: 'S-1', longName: 'Requirements', entries: depthFirst },
      { identifier: 'S-2', entries: depthFirst },
      { identifier: 'S-3', longName: 'Empty', entries: [] },
    ]);
  });

  it('reads elements with a namespace prefix, and an entry without an OBJECT as the object ""', async () => {
    const prefixed = reqif(specification('S', 'Doc', entry('A') + entry('B')))
      .replace(/<(\/?)([A-Z])/g, '<$1reqif:$2')
      .replace('<reqif:REQ-IF xmlns=', '<reqif:REQ-IF xmlns:reqif=');
    expect(prefixed).toContain('<reqif:SPEC-HIERARCHY IDENTIFIER="H-B">');
    expect(await read(prefixed)).toEqual([
      { identifier: 'S', longName: 'Doc', entries: levels(['A', 1], ['B', 1]) },
    ]);
    expect(await read(reqif(specification('S', 'Doc', '<SPEC-HIERARCHY IDENTIFIER="H"/>')))).toEqual([
      { identifier: 'S', longName: 'Doc', entries: levels(['', 1]) },
    ]);
  });

  it('holds at most maxHierarchyEntries entries of one specification, of identifiers within maxDefinitionBytes', async () => {
    const many = specification('S', 'Big', Array.from({ length: 30 }, (_, i) => entry(`O-${i}`)).join(''));
    expect(await read(reqif(many), { maxHierarchyEntries: 30 })).toHaveLength(1);
    const failure = await read(reqif(many), { maxHierarchyEntries: 29 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ImportLimitError);
    expect((failure as ImportLimitError).exceeded).toMatchObject({ limit: 'maxHierarchyEntries', value: 29 });
    expect((failure as Error).message).toMatch(
      /has a SPECIFICATION \(S\) whose hierarchy holds more than 29 entries \(line \d+\), the most the import holds while it reads one hierarchy\. Export the specification in parts\.$/,
    );
    // Each specification's entries count on their own.
    expect(await read(reqif(many + many.replace('"S"', '"T"')), { maxHierarchyEntries: 30 })).toHaveLength(2);

    const long = specification('S', 'Long', entry('X'.repeat(600)) + entry('Y'.repeat(600)));
    const tooLong = await read(reqif(long), { maxDefinitionBytes: 1000 }).catch((error: unknown) => error);
    expect((tooLong as ImportLimitError).exceeded).toMatchObject({ limit: 'maxDefinitionBytes' });
  });

  it('keeps the reader limits: nesting depth, DOCTYPE, a bare "&" where it is, a file cut short', async () => {
    let deep = 'LEAF';
    for (let i = 0; i < 30; i++) deep = entry(`L${i}`, deep === 'LEAF' ? '' : deep);
    expect((await read(reqif(specification('S', 'Deep', deep))))[0]!.entries).toHaveLength(30);
    const tooDeep = await read(reqif(specification('S', 'Deep', deep)), { maxDepth: 40 }).catch(
      (error: unknown) => error,
    );
    expect((tooDeep as ImportLimitError).exceeded).toMatchObject({ limit: 'maxDepth' });

    await expect(read(reqif('', '<!DOCTYPE x [<!ENTITY a "b">]>'))).rejects.toBeInstanceOf(ImportFileError);
    const text = reqif(specification('S', 'R&D', entry('A')));
    const before = text.slice(0, text.indexOf('&D')).split('\n');
    await expect(read(text)).rejects.toThrow(
      `is not well-formed XML at line ${before.length}, column ${before.at(-1)!.length + 1}: an "&" that starts no character or entity reference`,
    );
    await expect(read(reqif(specification('S', 'Doc', entry('A'))).slice(0, -40))).rejects.toThrow(
      /before its XML is complete .* The file may be cut short/,
    );
  });
});
