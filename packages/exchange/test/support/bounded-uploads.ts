import { open } from 'node:fs/promises';
import { crc32, createDeflateRaw } from 'node:zlib';

/** A part of a zip: its name and its bytes, produced a chunk at a time (a part may be far larger than memory allows). */
export interface ZipPart {
  name: string;
  chunks: () => Iterable<string | Buffer>;
}

/** `text` repeated until `bytes` are produced, a chunk at a time. */
export function* repeated(text: string, bytes: number): Generator<Buffer> {
  const chunk = Buffer.from(text.repeat(Math.max(1, Math.floor((1 << 20) / text.length))));
  let left = bytes;
  while (left > 0) {
    const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= part.length;
    yield part;
  }
}

async function deflated(part: ZipPart): Promise<{ data: Buffer; crc: number; size: number }> {
  const deflate = createDeflateRaw({ level: 1 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const ended = new Promise((resolve) => deflate.on('end', resolve));
  let crc = 0;
  let size = 0;
  let pending: Buffer[] = [];
  let pendingBytes = 0;
  const flush = async () => {
    const bytes = Buffer.concat(pending);
    pending = [];
    pendingBytes = 0;
    crc = crc32(bytes, crc);
    size += bytes.length;
    if (!deflate.write(bytes)) await new Promise((resolve) => deflate.once('drain', resolve));
  };
  // Small chunks (a row each) are gathered: the deflater works a megabyte at a time.
  for (const chunk of part.chunks()) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    pending.push(bytes);
    pendingBytes += bytes.length;
    if (pendingBytes >= 1 << 20) await flush();
  }
  await flush();
  deflate.end();
  await ended;
  return { data: Buffer.concat(out), crc, size };
}

/** Writes a zip of the parts (deflated, sizes in the local headers), in their order. */
export async function writeZip(file: string, parts: ZipPart[]): Promise<number> {
  const handle = await open(file, 'w');
  const central: Buffer[] = [];
  let offset = 0;
  try {
    for (const part of parts) {
      const { data, crc, size } = await deflated(part);
      const name = Buffer.from(part.name);
      const local = Buffer.alloc(30);
      local.writeUInt32LE(0x04034b50, 0);
      local.writeUInt16LE(20, 4);
      local.writeUInt16LE(0, 6);
      local.writeUInt16LE(8, 8);
      local.writeUInt32LE(crc >>> 0, 14);
      local.writeUInt32LE(data.length, 18);
      local.writeUInt32LE(size, 22);
      local.writeUInt16LE(name.length, 26);
      await handle.write(Buffer.concat([local, name, data]));
      const entry = Buffer.alloc(46);
      entry.writeUInt32LE(0x02014b50, 0);
      entry.writeUInt16LE(20, 4);
      entry.writeUInt16LE(20, 6);
      entry.writeUInt16LE(8, 10);
      entry.writeUInt32LE(crc >>> 0, 16);
      entry.writeUInt32LE(data.length, 20);
      entry.writeUInt32LE(size, 24);
      entry.writeUInt16LE(name.length, 28);
      entry.writeUInt32LE(offset, 42);
      central.push(entry, name);
      offset += local.length + name.length + data.length;
    }
    const directory = Buffer.concat(central);
    const end = Buffer.alloc(22);
    end.writeUInt32LE(0x06054b50, 0);
    end.writeUInt16LE(parts.length, 8);
    end.writeUInt16LE(parts.length, 10);
    end.writeUInt32LE(directory.length, 12);
    end.writeUInt32LE(offset, 16);
    await handle.write(Buffer.concat([directory, end]));
    return offset + directory.length + end.length;
  } finally {
    await handle.close();
  }
}

const MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const RELS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/**
 * An .xlsx of one sheet ("Sheet1"), as a spreadsheet writes one: its shared string table and the
 * sheet's XML given as chunks (either may be huge). Cells refer to shared strings by index.
 */
export function workbookParts(
  sharedStrings: () => Iterable<string | Buffer>,
  sheetData: () => Iterable<string | Buffer>,
): ZipPart[] {
  return [
    {
      name: '[Content_Types].xml',
      chunks: () => [
        '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>',
      ],
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      chunks: () => [
        `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${RELS}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`,
      ],
    },
    {
      name: 'xl/workbook.xml',
      chunks: () => [
        `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${MAIN}" xmlns:r="${RELS}"><sheets><sheet name="Sheet1" sheetId="1" r:id="rId1"/></sheets></workbook>`,
      ],
    },
    {
      name: 'xl/sharedStrings.xml',
      chunks: function* () {
        yield `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${MAIN}">`;
        yield* sharedStrings();
        yield '</sst>';
      },
    },
    {
      name: 'xl/worksheets/sheet1.xml',
      chunks: function* () {
        yield `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${MAIN}"><sheetData>`;
        yield* sheetData();
        yield '</sheetData></worksheet>';
      },
    },
  ];
}

/** A header row of shared strings 0 and 1 ("name", "Note"), then rows naming "N-<i>" with shared string `note`. */
export function* rowsOf(count: number, note = 2): Generator<string> {
  yield '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>';
  for (let i = 2; i < count + 2; i++)
    yield `<row r="${i}"><c r="A${i}" t="inlineStr"><is><t>N-${i}</t></is></c><c r="B${i}" t="s"><v>${note}</v></c></row>`;
}

/** A workbook whose third shared string (the Note of its one row) is `bytes` of `x`: a few hundred KB zipped per 300 MB. */
export function hugeSharedString(bytes: number): ZipPart[] {
  return workbookParts(
    function* () {
      yield '<si><t>name</t></si><si><t>Note</t></si><si><t>';
      yield* repeated('x', bytes);
      yield '</t></si>';
    },
    () => rowsOf(1),
  );
}
