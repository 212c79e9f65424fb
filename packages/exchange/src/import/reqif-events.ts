import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { eventLoopSlices } from '../event-loop.js';
import { ImportFileError } from './errors.js';
import {
  cellTooLarge,
  importLimits,
  limitError,
  sizeText,
  XmlRuns,
  XmlSections,
  type ImportLimits,
} from './limits.js';
import { openReqifInput, type ReqifInput } from './reqif-archive.js';
import type { ImportWording } from './wording.js';
import { doctypeRefused, firstBareAmpersand, saxesErrorParts } from './xml-errors.js';

/** Characters of an identifier or name that a message quotes (`clip`). */
export const MAX_QUOTED = 80;

/** An element's name without its namespace prefix: ReqIF files may write `reqif:SPEC-OBJECT`. */
export const local = (name: string) => name.slice(name.indexOf(':') + 1);

/**
 * What a reader of a ReqIF document does at its elements, in document order. The reader has opened
 * and checked the element (ReqifReader.open holds it) before `open` is called, and closed it before
 * `close`.
 */
export interface ReqifHandlers<T> {
  /** An element opens: its local name, its tag, and the local name of the element it is in. */
  open(name: string, tag: SaxesTagPlain, parent: string | undefined): void;
  /**
   * Text the handler takes itself (an XHTML value's), returning true; any other text is gathered,
   * bounded, for `close`.
   */
  text?(chunk: string): boolean;
  /**
   * An element closes, with the text gathered since the last element opened (the IDENTIFIER a
   * `…-REF` element holds); what it returns is yielded.
   */
  close(name: string, text: string): T | undefined;
}

export interface ReqifReadOptions {
  /** A ReqIF archive's .reqif file to read, by its path in the archive; default: its only one. */
  entry?: string;
  /** How advice names the options (default: `rxs import`'s). */
  wording?: ImportWording;
  /** What reading the file may cost (default: DEFAULT_IMPORT_LIMITS). */
  limits?: Partial<ImportLimits>;
}

/** A ReqIF file (a .reqif, or an archive's entry) read by the handlers `handlersOf` makes for its reader. */
export async function* readReqif<T>(
  file: string,
  options: ReqifReadOptions,
  handlersOf: (reader: ReqifReader) => ReqifHandlers<T>,
): AsyncGenerator<T> {
  const limits = importLimits(options.limits);
  const input = await openReqifInput(file, { entry: options.entry, wording: options.wording, limits });
  const reader = new ReqifReader(file, limits);
  yield* reader.read(input, handlersOf(reader));
}

/**
 * A ReqIF document read as a stream of elements under the import's limits, whatever reads it (spec
 * objects, relations, hierarchies): no DTD is read (a DOCTYPE is refused), every text, comment,
 * CDATA section and processing instruction is bounded by maxCellBytes before the XML parser has
 * gathered it, the open elements by maxDepth and maxRowBytes (OpenElements), and the first error
 * of the parser is said where a person must fix it.
 */
export class ReqifReader {
  readonly open: OpenElements;
  /** The parser of the document being read. */
  private parser: { readonly line: number } | undefined;

  constructor(
    readonly file: string,
    readonly limits: ImportLimits,
  ) {
    this.open = new OpenElements(limits, file);
  }

  /** The parser's line: where a message places what a handler refuses. */
  get line(): number {
    return this.parser?.line ?? 1;
  }

  /**
   * The document's elements given to `handlers`, what they return yielded as each chunk of the
   * text is parsed, with a turn of the event loop between items. A limit a handler throws is
   * thrown as it is.
   */
  async *read<T>(input: ReqifInput, handlers: ReqifHandlers<T>): AsyncGenerator<T> {
    const { file, limits, open } = this;
    const ready: T[] = [];
    let text = '';
    let parserError: Error | undefined;
    let atEnd = false;
    const parser = new SaxesParser({ xmlns: false, position: true });
    this.parser = parser;
    parser.on('error', (error) => {
      parserError ??= error;
    });
    // XmlSections finds a DOCTYPE before the parser gathers its DTD: this refuses any it let pass.
    parser.on('doctype', () => {
      throw doctypeRefused(file);
    });
    parser.on('opentag', (tag: SaxesTagPlain) => {
      const name = local(tag.name);
      const parent = open.innermost;
      open.push(name, tag, parser.line);
      text = '';
      handlers.open(name, tag, parent);
    });
    parser.on('text', (chunk: string) => {
      if (handlers.text?.(chunk)) return;
      // Texts between comments or processing instructions join, beyond XmlRuns' sight.
      text += chunk;
      if (text.length > limits.maxCellBytes) throw cellTooLarge(limits, `${file}, line ${parser.line}`);
    });
    parser.on('closetag', (tag) => {
      open.pop();
      const item = handlers.close(local(tag.name), text);
      if (item !== undefined) ready.push(item);
    });

    let line = 1;
    const runs = new XmlRuns(limits.maxCellBytes);
    const sections = new XmlSections(limits.maxCellBytes);
    const turn = eventLoopSlices();
    try {
      for await (const chunk of input.text()) {
        if (runs.exceeds(chunk)) throw cellTooLarge(limits, `${file}, after line ${line}`);
        const section = sections.check(chunk);
        if (section === 'DOCTYPE') throw doctypeRefused(file);
        if (section)
          throw limitError(
            'maxCellBytes',
            limits.maxCellBytes,
            `${file} holds a ${section} of more than ${sizeText(limits.maxCellBytes)} after line ${line}, more than any value may hold, which the XML parser would read whole: ReqIF tools write none that long. Export the file again.`,
          );
        parser.write(chunk);
        if (parserError) break;
        line = parser.line;
        for (const item of ready.splice(0)) {
          yield item;
          await turn();
        }
      }
      if (!parserError) {
        atEnd = true;
        parser.close();
      }
    } catch (error) {
      // What is not the parser's (a missing file, a limit) is said as it is.
      if (error !== parserError) throw error;
    }
    if (parserError) throw await this.notWellFormed(parserError, atEnd, line, input);
    yield* ready.splice(0);
  }

  /**
   * The parser's first error, where a person must fix it: the place saxes gives, or an earlier bare
   * `&` that saxes read on past; an error at the end of the file says it may be cut short.
   */
  private async notWellFormed(
    error: Error,
    atEnd: boolean,
    lastLine: number,
    input: ReqifInput,
  ): Promise<ImportFileError> {
    const { file } = this;
    const { at, what } = saxesErrorParts(error);
    const ampersand = at && (await firstBareAmpersand(input.text(), at));
    if (ampersand)
      return new ImportFileError(
        `${file} is not well-formed XML at line ${ampersand.line}, column ${ampersand.column}: an "&" that starts no character or entity reference (XML writes it as "&amp;"). Correct it there, or export the file again.`,
      );
    const where = at ? `line ${at.line}, column ${at.column}` : `near line ${lastLine}`;
    const words = what.replace(/\.$/, '');
    if (atEnd)
      return new ImportFileError(
        `${file} is not well-formed XML: it ends at ${where} before its XML is complete (${words}). The file may be cut short: export it again.`,
      );
    return new ImportFileError(
      `${file} is not well-formed XML at ${where}: ${words}${what === 'undefined entity.' ? ' (XML knows only &amp;, &lt;, &gt;, &quot; and &apos;, and references such as &#160;)' : ''}. Correct it there, or export the file again.`,
    );
  }
}

/**
 * The elements open at the parser's place, innermost last. The parser holds each of them, so there
 * are at most maxDepth, with names and attributes of at most maxRowBytes characters together: the
 * elements of one spec object and its largest value fit many times.
 */
export class OpenElements {
  private readonly names: string[] = [];
  private readonly sizes: number[] = [];
  private size = 0;
  /** THE-VALUE elements open: inside one, an XHTML value's elements make its text. */
  private theValues = 0;

  constructor(
    private readonly limits: ImportLimits,
    private readonly file: string,
  ) {}

  get innermost(): string | undefined {
    return this.names[this.names.length - 1];
  }

  get inTheValue(): boolean {
    return this.theValues > 0;
  }

  /** Opens the element `name` (the tag's local name) at `line`; throws past a limit. */
  push(name: string, tag: SaxesTagPlain, line: number): void {
    let size = tag.name.length;
    for (const [key, value] of Object.entries(tag.attributes)) size += key.length + value.length;
    if (this.names.length >= this.limits.maxDepth)
      throw limitError(
        'maxDepth',
        this.limits.maxDepth,
        `${this.file} nests elements more than ${this.limits.maxDepth.toLocaleString('en')} deep at line ${line}, deeper than ReqIF tools nest a specification's hierarchy or an XHTML value. Export the file again, with a flatter hierarchy or simpler values if it still nests that deep.`,
      );
    if (this.size + size > this.limits.maxRowBytes)
      throw limitError(
        'maxRowBytes',
        this.limits.maxRowBytes,
        `${this.file} has elements open inside one another whose names and attributes hold more than ${sizeText(this.limits.maxRowBytes)} at line ${line}, more than one spec object may hold. Export the file again.`,
      );
    this.names.push(name);
    this.sizes.push(size);
    this.size += size;
    if (name === 'THE-VALUE') this.theValues++;
  }

  pop(): void {
    if (this.names.pop() === 'THE-VALUE') this.theValues--;
    this.size -= this.sizes.pop() ?? 0;
  }
}

/**
 * What a reader keeps of a file's declarations while it reads on (spec object types, attribute
 * definitions, enumeration values; relation types): at most maxDefinitions of them, their
 * identifiers and names of at most maxDefinitionBytes characters together.
 */
export class Declarations {
  private count = 0;
  private characters = 0;

  constructor(
    private readonly limits: ImportLimits,
    private readonly file: string,
    /** What is declared, as the messages name it: "spec object types, attribute definitions …". */
    private readonly what: string,
    /** What the reader reads while it holds them: "the spec objects". */
    private readonly readingOn: string,
  ) {}

  add(...texts: (string | undefined)[]): void {
    if (++this.count > this.limits.maxDefinitions)
      throw limitError(
        'maxDefinitions',
        this.limits.maxDefinitions,
        `${this.file} declares more than ${this.limits.maxDefinitions.toLocaleString('en')} ${this.what}, the most the import holds while it reads ${this.readingOn}. ${EXPORT_LESS}`,
      );
    for (const text of texts) this.characters += text?.length ?? 0;
    this.check();
  }

  /** A declaration's default value, held as long as the declarations. */
  addLength(characters: number): void {
    this.characters += characters;
    this.check();
  }

  private check(): void {
    if (this.characters > this.limits.maxDefinitionBytes)
      throw limitError(
        'maxDefinitionBytes',
        this.limits.maxDefinitionBytes,
        `The ${this.what} ${this.file} declares have identifiers and names of more than ${sizeText(this.limits.maxDefinitionBytes)} together, the most the import holds while it reads ${this.readingOn}. ${EXPORT_LESS}`,
      );
  }
}

const EXPORT_LESS = 'Export only the specification to import, with the types and attributes it uses.';
