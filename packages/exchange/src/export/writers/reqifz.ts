import { createRequire } from 'node:module';
import { basename } from 'node:path';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import { finished } from 'node:stream/promises';
import type { ExportPart, ExportWriter } from '../model.js';
import { closeOutput } from './output.js';
import { ReqifWriter, type ReqifWriterOptions } from './reqif.js';

export interface ReqifzWriterOptions extends ReqifWriterOptions {
  /** The name of the archive's file (a folder is left out): its ReqIF file is named after it. */
  fileName?: string;
}

/** The ReqIF file's name when the archive's is not known (standard output). */
const DEFAULT_ENTRY = 'rxs-export.reqif';

/** The ReqIF file of the archive `fileName`: `design.reqifz` holds `design.reqif`. */
export function reqifEntryName(fileName: string | undefined): string {
  const base = fileName === undefined ? '' : basename(fileName).replace(/\.(reqifz|zip)$/i, '');
  return base === '' || base === '-' ? DEFAULT_ENTRY : `${base}.reqif`;
}

/** archiver's zip: a readable of the archive's bytes, entries appended in order. */
interface ZipArchive extends Readable {
  append(source: Readable, data: { name: string; date: Date }): this;
  finalize(): Promise<void>;
  abort(): this;
}

/** archiver, loaded when an archive is written, not whenever the sdk is imported. */
const archiver = (): ((format: 'zip') => ZipArchive) => createRequire(import.meta.url)('archiver');

/**
 * A ReqIF archive (.reqifz, as the ReqIF Implementation Guide names a zip of ReqIF files): one zip
 * entry holding what `--format reqif` writes (ReqifWriter), named after the archive, and nothing
 * else (values are text: there are no attachments). The ReqIF text is deflated into `out` as it is
 * produced, so memory stays flat. The entry is dated at the export's moment, not the clock's: an
 * export as of a moment equals, byte for byte, the one taken at that moment.
 */
export class ReqifzWriter implements ExportWriter {
  readonly extension = 'reqifz';
  /** What ReqifWriter writes, on its way into the zip entry. */
  private readonly text = new PassThrough();
  private readonly reqif: ReqifWriter;
  /** Opened on the first part, which dates the entry. */
  private zip: ZipArchive | undefined;
  private ended = false;

  constructor(
    private readonly out: Writable,
    private readonly options: ReqifzWriterOptions = {},
  ) {
    this.reqif = new ReqifWriter(this.text, options);
  }

  get warnings(): readonly string[] {
    return this.reqif.warnings;
  }

  async write(part: ExportPart): Promise<void> {
    this.zip ??= this.openZip(part.kind === 'header' ? new Date(part.header.exportedAt) : new Date());
    if (part.kind === 'end') this.ended = true;
    await this.reqif.write(part);
  }

  /**
   * Writes the ReqIF text into the entry (when the export ended) and then the zip's directory; a
   * failed export only stops the zip and ends `out`, whose bytes are discarded.
   */
  async close(): Promise<void> {
    let failure: unknown;
    await this.reqif.close().catch((error: unknown) => (failure = error));
    const complete = this.ended && failure === undefined && this.zip !== undefined;
    await closeOutput(
      this.out,
      complete,
      () => this.finishZip(),
      async () => {
        if (!complete) this.discardZip();
      },
    ).catch((error: unknown) => (failure ??= error));
    if (failure !== undefined) throw failure;
  }

  private openZip(date: Date): ZipArchive {
    const zip = archiver()('zip');
    zip.pipe(this.out);
    zip.append(this.text, { name: reqifEntryName(this.options.fileName), date });
    return zip;
  }

  private async finishZip(): Promise<void> {
    const zip = this.zip!;
    // Until the zip has passed its last byte on, `out` must not be ended (the pipe ends it).
    const passed = finished(zip, { writable: false });
    await zip.finalize();
    await passed;
  }

  private discardZip(): void {
    if (!this.zip) return;
    this.zip.unpipe(this.out);
    this.zip.abort();
    this.zip.destroy();
  }
}
