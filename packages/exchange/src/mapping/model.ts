/**
 * What semantic mapping makes of a topic and its records: the topic's fields (form keys with the
 * semantic names they resolve to) and each record's values by those names. Exports, imports and
 * sync all speak in these terms, so they live below all of them.
 */

/** Where a semantic name came from, by the document's priority rules. */
export type NameSource = 'service-key' | 'label' | 'key' | 'data';

/** One column of a topic: a form key and the semantic name it resolves to. */
export interface ExportedField {
  /** The opaque form key (for nested components, the full data path, e.g. "risks.severity"). */
  key: string;
  /** Semantic name, unique within the topic (see mapping for how collisions are kept apart). */
  name: string;
  source: NameSource;
  /** form-js component type (textfield, select, checklist, dynamiclist, ...); absent for data-only keys. */
  type?: string;
  label?: string;
  /** Allowed values with their labels, for select, radio and checklist. */
  options?: { value: unknown; label: string }[];
  /** For a dynamiclist: the fields of each item, keys relative to the item. */
  itemFields?: ExportedField[];
}

export interface ExportedRecord {
  id: string;
  /**
   * Human identifier (`REQ_001`), unique within the export: by the topic's identifier rule, from a
   * leading `PREFIX_NNN` in the name or title, else the name when it is a valid id, else the
   * topic's prefix and the `_id`. Formats show it beside `id`, which stays for round trips.
   */
  readableId: string;
  name: string;
  version: string;
  /** Revision id the record belongs to. */
  topicRevisionId: string;
  /**
   * The record's identity in the source it was imported from (`context.global_element_id`: a ReqIF
   * IDENTIFIER, a CSV key), absent when it has none. Every format shows it, so a file edited outside
   * RXS and imported back, or returned to the source tool, still finds the same objects.
   */
  sourceId?: string;
  /** Values by semantic name. A dynamiclist value is an array of objects keyed by item field names. */
  values: Record<string, unknown>;
  createdAt?: string;
  updatedAt?: string | null;
}
