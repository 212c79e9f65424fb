import { createReadStream } from 'node:fs';
import { ImportFileError } from './errors.js';

/**
 * A text file's characters, chunk by chunk, whatever Unicode encoding it was saved in: UTF-8 with
 * or without a byte order mark, or UTF-16 with one (Excel's "Unicode text"). Anything else (a
 * Windows code page, say) is refused with the byte where it stops being UTF-8, instead of
 * importing mangled characters.
 */
export async function* decodeTextFile(file: string): AsyncGenerator<string> {
  // A parser takes each chunk in one synchronous step: 256 KiB keeps that step to a few milliseconds.
  yield* decodeText(createReadStream(file, { highWaterMark: 1 << 18 }), file);
}

/** The characters of a text's bytes, as decodeTextFile reads a file's; `file` names it in messages. */
export async function* decodeText(source: AsyncIterable<Buffer>, file: string): AsyncGenerator<string> {
  let decoder: TextDecoder | undefined;
  let offset = 0;
  let head = Buffer.alloc(0);
  for await (const chunk of source) {
    let bytes = chunk;
    if (!decoder) {
      // The byte order mark decides; wait for its bytes (a file may arrive in tiny chunks).
      head = Buffer.concat([head, bytes]);
      if (head.length < 3 && bytes.length > 0) continue;
      decoder = new TextDecoder(encodingOf(head), { fatal: true, ignoreBOM: false });
      bytes = head;
    }
    yield decodeOrExplain(decoder, bytes, offset, file, true);
    offset += bytes.length;
  }
  if (!decoder) {
    if (head.length === 0) return;
    decoder = new TextDecoder(encodingOf(head), { fatal: true, ignoreBOM: false });
    yield decodeOrExplain(decoder, head, 0, file, true);
  }
  yield decodeOrExplain(decoder, new Uint8Array(0), offset, file, false);
}

function encodingOf(head: Buffer): string {
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  return 'utf-8';
}

function decodeOrExplain(
  decoder: TextDecoder,
  bytes: Uint8Array,
  offset: number,
  file: string,
  stream: boolean,
): string {
  try {
    return decoder.decode(bytes, { stream });
  } catch {
    const at = stream ? firstBadByte(bytes) : -1;
    throw new ImportFileError(
      `${file} is not UTF-8 or UTF-16 text${at >= 0 ? ` (byte ${offset + at} is not UTF-8)` : ' (it ends inside a character)'}: ` +
        `save it as "CSV UTF-8" (Excel) or "Text CSV" with the UTF-8 character set (LibreOffice), then import it again.`,
    );
  }
}

/** Where UTF-8 decoding first fails in `bytes`, for the message; -1 when it does not. */
function firstBadByte(bytes: Uint8Array): number {
  const strict = new TextDecoder('utf-8', { fatal: true });
  let low = 0;
  let high = bytes.length;
  // The longest prefix that decodes (as a stream: an unfinished last character is fine).
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    try {
      strict.decode(bytes.subarray(0, mid), { stream: false });
      low = mid;
    } catch {
      high = mid - 1;
    }
  }
  return low < bytes.length ? low : -1;
}
