/**
 * The text of a ReqIF XHTML value, built from its elements as an XML parser meets them: what a
 * person reads in the tool that wrote it, as plain lines. Paragraphs, divisions, headings and list
 * items start lines of their own, `<br/>` breaks a line, list items carry a marker ("- ", or "1. "
 * counting from the list's `start`) indented by their nesting, a table gives a line per row with
 * its cells separated by " | ", and `<pre>` keeps its spaces and lines. An embedded `<object>` is
 * its fallback content (else its `alt`), and the file it names is listed: the import cannot carry
 * a file into a record's fields.
 */

/** An `<object>` of the value: the file it embeds (`data`) and its media type. */
export interface EmbeddedObject {
  data?: string;
  type?: string;
}

/** Elements that start and end a line of their own. */
const BLOCKS: ReadonlySet<string> = new Set([
  'address',
  'blockquote',
  'caption',
  'dd',
  'div',
  'dl',
  'dt',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'hr',
  'li',
  'ol',
  'p',
  'pre',
  'table',
  'tr',
  'ul',
]);

/** Spaces XHTML collapses to one outside `<pre>` (not the no-break space). */
const COLLAPSIBLE = /[ \t\r\n\f]+/g;

interface OpenList {
  ordered: boolean;
  next: number;
}

interface OpenObject {
  alt?: string;
}

export class XhtmlText {
  private readonly lines: string[] = [];
  private readonly line = new LineBuilder();
  /** The marker of a list item whose first text is still to come. */
  private marker: string | undefined;
  private readonly lists: OpenList[] = [];
  private readonly objects: OpenObject[] = [];
  /**
   * The open objects from this index on have had no text in their fallback content yet: text marks
   * every open object at once, so one index tells them all, however deep they nest.
   */
  private silentFrom = 0;
  /** Cells in the open table row so far. */
  private cells = 0;
  /** Depth of the open table cells: inside one, a line break is a space, the row stays one line. */
  private inCell = 0;
  private inPre = 0;
  private size = 0;
  private readonly embedded: EmbeddedObject[] = [];
  /** Characters of the embedded objects' file names and types, which the row's warnings repeat. */
  private embeddedSize = 0;

  /** Characters of the text so far and of what it embeds, for the import's cell limit. */
  get length(): number {
    return this.size + this.line.length + this.embeddedSize;
  }

  open(name: string, attributes: Readonly<Record<string, string>>): void {
    if (name === 'br') return this.lineBreak(true);
    if (BLOCKS.has(name)) this.lineBreak(false);
    if (name === 'pre') this.inPre++;
    else if (name === 'ul' || name === 'ol') {
      const start = Number.parseInt(attributes['start'] ?? '', 10);
      this.lists.push({ ordered: name === 'ol', next: Number.isFinite(start) ? start : 1 });
    } else if (name === 'li') {
      const list = this.lists[this.lists.length - 1];
      const indent = '  '.repeat(Math.max(this.lists.length - 1, 0));
      this.marker = `${indent}${list?.ordered ? `${list.next++}. ` : '- '}`;
    } else if (name === 'tr') this.cells = 0;
    else if (name === 'td' || name === 'th') {
      if (this.cells++ > 0) this.emit(this.line.endsInSpace ? '| ' : ' | ');
      this.inCell++;
    } else if (name === 'object') {
      const object = { data: attributes['data'], type: attributes['type'] };
      this.embedded.push(object);
      this.embeddedSize += (object.data?.length ?? 0) + (object.type?.length ?? 0) + 1;
      this.objects.push({ alt: attributes['alt'] ?? attributes['title'] });
    }
  }

  close(name: string): void {
    if (name === 'pre') this.inPre--;
    else if (name === 'ul' || name === 'ol') this.lists.pop();
    else if (name === 'li') this.marker = undefined;
    else if (name === 'td' || name === 'th') this.inCell--;
    else if (name === 'object') {
      const object = this.objects.pop();
      const gaveText = this.objects.length < this.silentFrom;
      this.silentFrom = Math.min(this.silentFrom, this.objects.length);
      if (object && !gaveText && object.alt?.trim()) this.text(object.alt);
    }
    if (BLOCKS.has(name)) this.lineBreak(false);
  }

  text(chunk: string): void {
    if (this.inPre > 0) {
      const [first = '', ...rest] = chunk.split(/\r?\n/);
      this.emit(first);
      for (const part of rest) {
        this.lineBreak(true);
        this.emit(part);
      }
      return;
    }
    let text = chunk.replace(COLLAPSIBLE, ' ');
    if (this.atLineStart() || this.line.endsInSpace) text = text.replace(/^ /, '');
    this.emit(text);
  }

  /** The text, its lines without trailing spaces, and the files of its embedded objects. */
  result(): { text: string; embedded: EmbeddedObject[] } {
    const lines = [...this.lines, this.line.text()].map((line) => line.trimEnd());
    while (lines.length > 0 && lines[0] === '') lines.shift();
    while (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    return { text: lines.join('\n'), embedded: this.embedded };
  }

  /** Whether the current line holds no text yet (a list marker waiting for its item's text aside). */
  private atLineStart(): boolean {
    return this.line.length === 0;
  }

  /** Appends text to the current line, after the list item's marker or indent a new line needs. */
  private emit(text: string): void {
    if (text === '') return;
    if (this.atLineStart()) {
      if (this.marker !== undefined) this.line.append(this.marker);
      else if (this.lists.length > 0 && this.inCell === 0) this.line.append('  '.repeat(this.lists.length));
      this.marker = undefined;
    }
    this.line.append(text);
    if (text.trim() !== '') this.silentFrom = this.objects.length;
  }

  /**
   * Ends the current line: always for `<br/>` (`hard`, so two of them leave an empty line), only when
   * it holds text for a block's edge. In a table cell the row goes on, after a space.
   */
  private lineBreak(hard: boolean): void {
    if (this.inCell > 0) {
      if (!this.atLineStart() && !this.line.endsInSpace) this.line.append(' ');
      return;
    }
    if (!hard && this.atLineStart()) return;
    this.size += this.line.length + 1;
    this.lines.push(this.line.take());
  }
}

/**
 * A line of text built from pieces (an XHTML value may be a million small elements): kept as
 * pieces, joined a thousand at a time. A string built by appending holds an object per piece until
 * it is read whole, and reading its end (does it end in a space?) copies it whole each time.
 */
class LineBuilder {
  private pieces: string[] = [];
  private readonly joined: string[] = [];
  length = 0;
  endsInSpace = false;

  append(text: string): void {
    if (text === '') return;
    this.pieces.push(text);
    this.length += text.length;
    this.endsInSpace = text.endsWith(' ');
    if (this.pieces.length >= 1024) {
      this.joined.push(this.pieces.join(''));
      this.pieces = [];
    }
  }

  text(): string {
    return this.joined.join('') + this.pieces.join('');
  }

  /** The text, and the line empty again. */
  take(): string {
    const text = this.text();
    this.pieces = [];
    this.joined.length = 0;
    this.length = 0;
    this.endsInSpace = false;
    return text;
  }
}

/** The warning an embedded object's row carries: the file is not imported and must be attached by hand. */
export function embeddedObjectWarning({ data, type }: EmbeddedObject): string {
  const what = data?.trim() ? `embedded object ${data.trim()}` : 'an embedded object that names no file';
  return `${what}${type?.trim() ? ` (${type.trim()})` : ''} is not imported: attach it to the record by hand.`;
}
