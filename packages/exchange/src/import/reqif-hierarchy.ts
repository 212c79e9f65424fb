import { clip } from '@rxs/contract/validation';
import { limitError, sizeText } from './limits.js';
import {
  MAX_QUOTED,
  readReqif,
  type ReqifHandlers,
  type ReqifReader,
  type ReqifReadOptions,
} from './reqif-events.js';

/** An entry of a specification's hierarchy: the spec object it places, at its level. */
export interface SpecHierarchyEntry {
  /** The IDENTIFIER of the spec object (its SPEC-OBJECT-REF); '' when the entry names none. */
  object: string;
  /** 1: a child of the SPECIFICATION; each level down, one more. */
  level: number;
}

/** A SPECIFICATION of a ReqIF file: a document's outline of spec objects. */
export interface SpecHierarchy {
  /** The SPECIFICATION's IDENTIFIER. */
  identifier: string;
  /** Its LONG-NAME, when it has one. */
  longName?: string;
  /**
   * Its SPEC-HIERARCHY entries depth-first: each entry, then its CHILDREN, in file order. An entry
   * is at most one level below the entry before it.
   */
  entries: SpecHierarchyEntry[];
}

/**
 * The SPECIFICATIONs of a ReqIF 1.2 file with their hierarchies, one at a time in file order, under
 * the limits the spec object reader keeps (ReqifReader): each hierarchy is held until its
 * SPECIFICATION closes (ReqIF writes an entry's OBJECT after its CHILDREN), so it holds at most
 * maxHierarchyEntries entries whose identifiers are at most maxDefinitionBytes characters together;
 * its depth is bounded by maxDepth, as every element's.
 */
export function readSpecHierarchies(
  file: string,
  options: ReqifReadOptions = {},
): AsyncGenerator<SpecHierarchy> {
  return readReqif(file, options, specHierarchyHandlers(file));
}

/** What reads a file's SPECIFICATIONs, for `readReqif` (alone, or beside other readers: reqif-links.ts). */
export function specHierarchyHandlers(file: string): (reader: ReqifReader) => ReqifHandlers<SpecHierarchy> {
  return (reader) => {
    let specification: SpecHierarchy | undefined;
    /** The entries open around the reader's place, innermost last, by their place in `entries`. */
    const open: number[] = [];
    let characters = 0;
    const { limits } = reader;
    const named = () => `${file} has a SPECIFICATION (${clip(specification?.identifier ?? '', MAX_QUOTED)})`;
    const hold = (length: number) => {
      characters += length;
      if (characters > limits.maxDefinitionBytes)
        throw limitError(
          'maxDefinitionBytes',
          limits.maxDefinitionBytes,
          `${named()} whose hierarchy names its spec objects by identifiers of more than ${sizeText(limits.maxDefinitionBytes)} together, the most the import holds while it reads one hierarchy. Export the specification in parts.`,
        );
    };
    return {
      open: (name, tag, parent) => {
        const attribute = (key: string) => tag.attributes[key] as string | undefined;
        if (name === 'SPECIFICATION' && parent === 'SPECIFICATIONS') {
          const identifier = attribute('IDENTIFIER') ?? '';
          const longName = attribute('LONG-NAME');
          specification = { identifier, ...(longName !== undefined && { longName }), entries: [] };
          characters = 0;
          hold(identifier.length + (longName?.length ?? 0));
        } else if (name === 'SPEC-HIERARCHY' && specification) {
          const { entries } = specification;
          if (entries.length >= limits.maxHierarchyEntries)
            throw limitError(
              'maxHierarchyEntries',
              limits.maxHierarchyEntries,
              `${named()} whose hierarchy holds more than ${limits.maxHierarchyEntries.toLocaleString('en')} entries (line ${reader.line}), the most the import holds while it reads one hierarchy. Export the specification in parts.`,
            );
          entries.push({ object: '', level: open.length + 1 });
          open.push(entries.length - 1);
        }
      },
      close: (name, text) => {
        if (!specification) return undefined;
        if (name === 'SPEC-OBJECT-REF' && open.length > 0 && reader.open.innermost === 'OBJECT') {
          const object = text.trim();
          hold(object.length);
          specification.entries[open[open.length - 1]!]!.object = object;
        } else if (name === 'SPEC-HIERARCHY') open.pop();
        else if (name === 'SPECIFICATION' && reader.open.innermost === 'SPECIFICATIONS') {
          const read = specification;
          specification = undefined;
          return read;
        }
        return undefined;
      },
    };
  };
}
