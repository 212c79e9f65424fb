import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import {
  ImportFileError,
  ImportLimitError,
  readSpecRelations,
  relationTypeOf,
  type SpecRelation,
} from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'rxs-spec-relations-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reqif = (relations: string, head = '') =>
  `<?xml version="1.0"?>${head}<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"><CORE-CONTENT><REQ-IF-CONTENT>` +
  '<SPEC-TYPES><SPEC-RELATION-TYPE IDENTIFIER="RT-1" LONG-NAME="Satisfies"/></SPEC-TYPES>' +
  `<SPEC-RELATIONS>${relations}</SPEC-RELATIONS></REQ-IF-CONTENT></CORE-CONTENT></REQ-IF>`;
const relation = (id: string, type: string, source: string, target: string) =>
  `<SPEC-RELATION IDENTIFIER="${id}"><TYPE><SPEC-RELATION-TYPE-REF>${type}</SPEC-RELATION-TYPE-REF></TYPE>` +
  `<SOURCE><SPEC-OBJECT-REF>${source}</SPEC-OBJECT-REF></SOURCE><TARGET><SPEC-OBJECT-REF>${target}</SPEC-OBJECT-REF></TARGET></SPEC-RELATION>`;

async function read(text: string, limits = {}): Promise<SpecRelation[]> {
  const file = join(dir, `f-${Math.random().toString(36).slice(2)}.reqif`);
  writeFileSync(file, text);
  const relations: SpecRelation[] = [];
  for await (const found of readSpecRelations(file, { limits })) relations.push(found);
  return relations;
}

describe('readSpecRelations', () => {
  it('gives each relation by its ends and its type LONG-NAME (an undeclared type by its reference)', async () => {
    expect(await read(reqif(relation('R1', 'RT-1', 'A', 'B') + relation('R2', 'RT-X', 'B', 'C')))).toEqual([
      { identifier: 'R1', source: 'A', target: 'B', type: 'Satisfies' },
      { identifier: 'R2', source: 'B', target: 'C', type: 'RT-X' },
    ]);
  });

  it('keeps the reader limits: DOCTYPE, long texts, deep nesting', async () => {
    await expect(read(reqif('', '<!DOCTYPE x [<!ENTITY a "b">]>'))).rejects.toBeInstanceOf(ImportFileError);
    await expect(
      read(reqif(relation('R1', 'RT-1', 'A'.repeat(5000), 'B')), { maxCellBytes: 1000 }),
    ).rejects.toBeInstanceOf(ImportLimitError);
    await expect(
      read(reqif(`${'<X>'.repeat(50)}${'</X>'.repeat(50)}`), { maxDepth: 20 }),
    ).rejects.toBeInstanceOf(ImportLimitError);
    await expect(read(reqif(relation('R1', 'RT-1', 'A', 'B')).slice(0, -20))).rejects.toBeInstanceOf(
      ImportFileError,
    );
  });

  it('says a bare "&" where it is, as the spec object reader does, not where the parser gives up', async () => {
    const text = reqif(
      ['A', 'B', 'C', 'D'].map((end, i) => `\n${relation(`R${i}`, 'RT-1', end, 'R&D-1')}`).join(''),
    );
    const before = text.slice(0, text.indexOf('&D-1')).split('\n');
    const failure = await read(text).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ImportFileError);
    expect((failure as Error).message).toMatch(
      new RegExp(
        `is not well-formed XML at line ${before.length}, column ${before.at(-1)!.length + 1}: an "&" that starts no character or entity reference`,
      ),
    );
  });

  it('maps a relation type: the mapping, else its own name when it is one, else is_related', () => {
    const mapping = new Map([['Satisfies', 'contributes_to' as const]]);
    expect(relationTypeOf('Satisfies', mapping)).toBe('contributes_to');
    expect(relationTypeOf('mentions', mapping)).toBe('mentions');
    expect(relationTypeOf('Refines', mapping)).toBe('is_related');
  });
});
