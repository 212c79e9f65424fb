import { open } from 'node:fs/promises';
import { repeated, writeZip } from './bounded-uploads.js';

/**
 * Hostile ReqIF documents, produced a chunk at a time so that a test writes files of hundreds of
 * megabytes (or zips of gigabytes) without holding them: entities that read files or addresses
 * (XXE), entities that expand to gigabytes, values of 100 MB, 100,000 declarations, 100,000
 * levels of nesting. Each is a well-formed ReqIF document apart from what makes it hostile.
 */

type Chunks = Iterable<string | Buffer>;
const MiB = 1024 * 1024;

/** The chunks of each part in turn, as they are asked for. */
function* concat(...parts: Chunks[]): Generator<string | Buffer> {
  for (const part of parts) yield* part;
}

/** `text` repeated to about `bytes` (repeated), never cut within one. */
const whole = (text: string, bytes: number) => repeated(text, Math.ceil(bytes / text.length) * text.length);

/** Writes the chunks to `file`, a megabyte at a time; its size in bytes. */
export async function writeChunks(file: string, chunks: Chunks): Promise<number> {
  const handle = await open(file, 'w');
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  let size = 0;
  const flush = async () => {
    await handle.write(Buffer.concat(pending));
    size += pendingBytes;
    pending = [];
    pendingBytes = 0;
  };
  try {
    for (const chunk of chunks) {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      pending.push(bytes);
      pendingBytes += bytes.length;
      if (pendingBytes >= MiB) await flush();
    }
    await flush();
    return size;
  } finally {
    await handle.close();
  }
}

/** What a document holds besides its frame; each part's chunks may be huge. */
export interface ReqifParts {
  /** Between the XML declaration and the root element: a DOCTYPE, say. */
  prolog?: string;
  /** More DATATYPES, after a string, an XHTML and an enumeration datatype (`dt-string`, `dt-xhtml`, `dt-enum`). */
  datatypes?: () => Chunks;
  /** More SPEC-ATTRIBUTES of the spec object type `type-req`, after its `ReqIF.Name` (`ad-name`) and `ReqIF.Text` (`ad-text`). */
  attributes?: () => Chunks;
  /** More SPEC-TYPES, after `type-req`. */
  specTypes?: () => Chunks;
  /** The SPEC-OBJECTS; by default one spec object named `Harmless`. */
  objects?: () => Chunks;
  /** The CHILDREN of the one SPECIFICATION. */
  hierarchy?: () => Chunks;
}

/** A spec object of `type-req` with these ATTRIBUTE-VALUE-… elements. */
export function* specObject(identifier: string, values: Chunks): Generator<string | Buffer> {
  yield `<SPEC-OBJECT IDENTIFIER="${identifier}" LAST-CHANGE="2024-05-02T10:00:00Z"><TYPE><SPEC-OBJECT-TYPE-REF>type-req</SPEC-OBJECT-TYPE-REF></TYPE><VALUES>`;
  yield* values;
  yield '</VALUES></SPEC-OBJECT>';
}

/** The `ReqIF.Name` value `name` (a string attribute: its text in THE-VALUE). */
export const nameValue = (name: string) =>
  `<ATTRIBUTE-VALUE-STRING THE-VALUE="${name}"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>ad-name</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>`;

/** A `ReqIF.Text` value of this XHTML. */
export function* textValue(xhtml: Chunks): Generator<string | Buffer> {
  yield '<ATTRIBUTE-VALUE-XHTML><DEFINITION><ATTRIBUTE-DEFINITION-XHTML-REF>ad-text</ATTRIBUTE-DEFINITION-XHTML-REF></DEFINITION><THE-VALUE>';
  yield* xhtml;
  yield '</THE-VALUE></ATTRIBUTE-VALUE-XHTML>';
}

/** A ReqIF 1.2 document of one spec object type, `type-req`, and one specification. */
export function* reqifDocument(parts: ReqifParts = {}): Generator<string | Buffer> {
  yield '<?xml version="1.0" encoding="UTF-8"?>\n';
  if (parts.prolog) yield `${parts.prolog}\n`;
  yield `<REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd" xmlns:xhtml="http://www.w3.org/1999/xhtml">
<THE-HEADER><REQ-IF-HEADER IDENTIFIER="header"><REQ-IF-TOOL-ID>hostile</REQ-IF-TOOL-ID><REQ-IF-VERSION>1.0</REQ-IF-VERSION><SOURCE-TOOL-ID>hostile</SOURCE-TOOL-ID></REQ-IF-HEADER></THE-HEADER>
<CORE-CONTENT><REQ-IF-CONTENT>
<DATATYPES>
<DATATYPE-DEFINITION-STRING IDENTIFIER="dt-string" LONG-NAME="String" MAX-LENGTH="4000"/>
<DATATYPE-DEFINITION-XHTML IDENTIFIER="dt-xhtml" LONG-NAME="Text"/>
<DATATYPE-DEFINITION-ENUMERATION IDENTIFIER="dt-enum" LONG-NAME="Status"><SPECIFIED-VALUES>
<ENUM-VALUE IDENTIFIER="ev-open" LONG-NAME="Open"><PROPERTIES><EMBEDDED-VALUE KEY="0" OTHER-CONTENT="open"/></PROPERTIES></ENUM-VALUE>
`;
  yield '</SPECIFIED-VALUES></DATATYPE-DEFINITION-ENUMERATION>\n';
  if (parts.datatypes) yield* parts.datatypes();
  yield `</DATATYPES>
<SPEC-TYPES>
<SPEC-OBJECT-TYPE IDENTIFIER="type-req" LONG-NAME="Requirement"><SPEC-ATTRIBUTES>
<ATTRIBUTE-DEFINITION-STRING IDENTIFIER="ad-name" LONG-NAME="ReqIF.Name"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-string</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>
<ATTRIBUTE-DEFINITION-XHTML IDENTIFIER="ad-text" LONG-NAME="ReqIF.Text"><TYPE><DATATYPE-DEFINITION-XHTML-REF>dt-xhtml</DATATYPE-DEFINITION-XHTML-REF></TYPE></ATTRIBUTE-DEFINITION-XHTML>
`;
  if (parts.attributes) yield* parts.attributes();
  yield '</SPEC-ATTRIBUTES></SPEC-OBJECT-TYPE>\n';
  yield '<SPECIFICATION-TYPE IDENTIFIER="type-spec" LONG-NAME="Module"/>\n';
  if (parts.specTypes) yield* parts.specTypes();
  yield '</SPEC-TYPES>\n<SPEC-OBJECTS>\n';
  yield* parts.objects?.() ?? specObject('so-1', [nameValue('Harmless')]);
  yield `</SPEC-OBJECTS>
<SPECIFICATIONS><SPECIFICATION IDENTIFIER="spec-1" LONG-NAME="Module"><TYPE><SPECIFICATION-TYPE-REF>type-spec</SPECIFICATION-TYPE-REF></TYPE><CHILDREN>`;
  yield* (
    parts.hierarchy?.() ?? [
      '<SPEC-HIERARCHY IDENTIFIER="h-1"><OBJECT><SPEC-OBJECT-REF>so-1</SPEC-OBJECT-REF></OBJECT></SPEC-HIERARCHY>',
    ]
  );
  yield `</CHILDREN></SPECIFICATION></SPECIFICATIONS>
</REQ-IF-CONTENT></CORE-CONTENT>
</REQ-IF>
`;
}

/** A spec object whose name and text are the entity `name`'s replacement text. */
const usingEntity = (name: string) => () =>
  specObject('so-1', concat([nameValue(`&${name};`)], textValue([`<xhtml:div>&${name};</xhtml:div>`])));

/** XXE: an external entity naming `uri` (a file:// or http:// address), used in a value. */
export const externalEntity = (uri: string) =>
  reqifDocument({
    prolog: `<!DOCTYPE REQ-IF [<!ENTITY leak SYSTEM "${uri}">]>`,
    objects: usingEntity('leak'),
  });

/** XXE through a parameter entity: the DTD itself reads `uri` (its text would declare more entities). */
export const parameterEntity = (uri: string) =>
  reqifDocument({
    prolog: `<!DOCTYPE REQ-IF [<!ENTITY % remote SYSTEM "${uri}"> %remote; <!ENTITY leak "%remote;">]>`,
    objects: usingEntity('leak'),
  });

/** A DOCTYPE naming an external DTD at `uri`, which a validating parser would fetch. */
export const externalDtd = (uri: string) =>
  reqifDocument({ prolog: `<!DOCTYPE REQ-IF SYSTEM "${uri}">`, objects: usingEntity('amp') });

/** Billion laughs: ten levels of entities each ten of the one below, 10^9 "lol"s (3 GB) from 1 KB. */
export function billionLaughs(): Generator<string | Buffer> {
  const levels = ['<!ENTITY lol0 "lol">'];
  for (let i = 1; i <= 9; i++) levels.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`);
  return reqifDocument({
    prolog: `<!DOCTYPE REQ-IF [\n${levels.join('\n')}\n]>`,
    objects: usingEntity('lol9'),
  });
}

/** An entity reference with no DOCTYPE to declare it. */
export const undeclaredEntity = () => reqifDocument({ objects: usingEntity('leak') });

/** A string value whose THE-VALUE attribute is `bytes` of text. */
export const hugeAttributeValue = (bytes: number) =>
  reqifDocument({
    objects: () =>
      specObject(
        'so-1',
        concat(['<ATTRIBUTE-VALUE-STRING THE-VALUE="'], repeated('lorem ipsum ', bytes), [
          '"><DEFINITION><ATTRIBUTE-DEFINITION-STRING-REF>ad-name</ATTRIBUTE-DEFINITION-STRING-REF></DEFINITION></ATTRIBUTE-VALUE-STRING>',
        ]),
      ),
  });

/** An XHTML value of `bytes`: one text, or (`marked`) words each in its own element, the text split at every one. */
export const hugeXhtmlValue = (bytes: number, options: { marked?: boolean } = {}) =>
  reqifDocument({
    objects: () =>
      specObject(
        'so-1',
        concat(
          [nameValue('Huge')],
          textValue(
            concat(
              ['<xhtml:div>'],
              whole(options.marked ? '<xhtml:b>lorem</xhtml:b> ' : 'lorem ipsum ', bytes),
              ['</xhtml:div>'],
            ),
          ),
        ),
      ),
  });

/** A comment, CDATA section or processing instruction of `bytes` of `<`, which the runs between two `<` do not see. */
export function hugeSection(kind: 'comment' | 'cdata' | 'pi', bytes: number): Generator<string | Buffer> {
  const [opener, closer] =
    kind === 'comment' ? ['<!--', '-->'] : kind === 'cdata' ? ['<![CDATA[', ']]>'] : ['<?note ', '?>'];
  return reqifDocument({
    objects: () =>
      specObject(
        'so-1',
        concat(
          [nameValue('Sectioned')],
          textValue(concat(['<xhtml:div>', opener], repeated('<<<<', bytes), [closer, '</xhtml:div>'])),
        ),
      ),
  });
}

/** A text between REF elements' comments: each run short, the text they join long. */
export const hugeJoinedText = (bytes: number) =>
  reqifDocument({
    objects: () =>
      concat(
        ['<SPEC-OBJECT IDENTIFIER="so-1"><TYPE><SPEC-OBJECT-TYPE-REF>'],
        whole('type-req<!---->', bytes),
        ['</SPEC-OBJECT-TYPE-REF></TYPE><VALUES/></SPEC-OBJECT>'],
      ),
  });

/** `count` attribute definitions of the one spec object type. */
export const manyAttributeDefinitions = (count: number) =>
  reqifDocument({
    *attributes() {
      for (let i = 0; i < count; i++)
        yield `<ATTRIBUTE-DEFINITION-STRING IDENTIFIER="ad-${i}" LONG-NAME="Attribute ${i}"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-string</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING>\n`;
    },
  });

/** An enumeration datatype of `count` values. */
export const manyEnumValues = (count: number) =>
  reqifDocument({
    *datatypes() {
      yield '<DATATYPE-DEFINITION-ENUMERATION IDENTIFIER="dt-many" LONG-NAME="Many"><SPECIFIED-VALUES>\n';
      for (let i = 0; i < count; i++)
        yield `<ENUM-VALUE IDENTIFIER="ev-${i}" LONG-NAME="Value ${i}"><PROPERTIES><EMBEDDED-VALUE KEY="${i}" OTHER-CONTENT="v${i}"/></PROPERTIES></ENUM-VALUE>\n`;
      yield '</SPECIFIED-VALUES></DATATYPE-DEFINITION-ENUMERATION>\n';
    },
  });

/** `count` more spec object types, each of one attribute definition. */
export const manySpecTypes = (count: number) =>
  reqifDocument({
    *specTypes() {
      for (let i = 0; i < count; i++)
        yield `<SPEC-OBJECT-TYPE IDENTIFIER="type-${i}" LONG-NAME="Type ${i}"><SPEC-ATTRIBUTES><ATTRIBUTE-DEFINITION-STRING IDENTIFIER="ad-t${i}" LONG-NAME="Name"><TYPE><DATATYPE-DEFINITION-STRING-REF>dt-string</DATATYPE-DEFINITION-STRING-REF></TYPE></ATTRIBUTE-DEFINITION-STRING></SPEC-ATTRIBUTES></SPEC-OBJECT-TYPE>\n`;
    },
  });

/** `count` string values in one spec object, all of one definition. */
export const manyValues = (count: number) =>
  reqifDocument({
    objects: () =>
      specObject(
        'so-1',
        (function* () {
          for (let i = 0; i < count; i++) yield nameValue(`v${i}`);
        })(),
      ),
  });

/** `open` … `close` nested `depth` deep around `inner`. */
const nested = (open: string, close: string, depth: number, inner = '') =>
  concat(whole(open, depth * open.length), [inner], whole(close, depth * close.length));

/** An XHTML value of `depth` nested divisions around a word. */
export const deepXhtml = (depth: number) =>
  reqifDocument({
    objects: () =>
      specObject(
        'so-1',
        concat([nameValue('Deep')], textValue(nested('<xhtml:div>', '</xhtml:div>', depth, 'deep'))),
      ),
  });

/** A specification whose hierarchy is `depth` levels deep, each the only child of the one above. */
export const deepHierarchy = (depth: number) =>
  reqifDocument({
    hierarchy: () =>
      nested(
        '<SPEC-HIERARCHY IDENTIFIER="h"><OBJECT><SPEC-OBJECT-REF>so-1</SPEC-OBJECT-REF></OBJECT><CHILDREN>',
        '</CHILDREN></SPEC-HIERARCHY>',
        depth,
      ),
  });

/** A ReqIF archive of one .reqif entry, `bomb.reqif`, of `bytes` (well-formed elements of text, a thousandth as many bytes zipped). */
export async function reqifzBomb(file: string, bytes: number): Promise<number> {
  const head =
    '<?xml version="1.0" encoding="UTF-8"?><REQ-IF xmlns="http://www.omg.org/spec/ReqIF/20110401/reqif.xsd"><THE-HEADER>';
  return writeZip(file, [
    { name: 'bomb.reqif', chunks: () => concat([head], whole(`<C>${'a'.repeat(1000)}</C>`, bytes)) },
  ]);
}

/** Makes the zip of one entry (writeZip's) declare that it inflates to `declared` bytes, whatever it does. */
export async function declareEntrySize(file: string, declared: number): Promise<void> {
  const handle = await open(file, 'r+');
  try {
    const field = Buffer.alloc(4);
    field.writeUInt32LE(declared);
    // The local header's uncompressed size (the entry's header is at 0), then the directory's.
    await handle.write(field, 0, 4, 22);
    const { size } = await handle.stat();
    const end = Buffer.alloc(22);
    await handle.read(end, 0, 22, size - 22);
    await handle.write(field, 0, 4, end.readUInt32LE(16) + 24);
  } finally {
    await handle.close();
  }
}
