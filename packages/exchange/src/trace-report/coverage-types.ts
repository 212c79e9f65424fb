/** What a traceability report is made of: topics, the rules that say which links count, each rule's coverage. */

export interface CoverageTopic {
  revisionId: string;
  historyId: string;
  name: string;
}

/** Which links count: a named link type from the mapping file, or any trace between two topics. */
export interface CoverageRule {
  source: CoverageTopic;
  target: CoverageTopic;
  /** The mapping file's link type counted (only traces from source to target records); none: any trace either way. */
  linkType?: string;
}

export interface RuleCoverage {
  rule: CoverageRule;
  /** Source records, and those with at least one counted link. */
  total: number;
  covered: number;
  /** covered / total in percent (100 for a source topic without records). */
  percent: number;
  /** Readable ids of the source records without a counted link, in export order. */
  uncovered: string[];
  /** Readable ids of the target records no source record links to, in export order. */
  orphans: string[];
  /** The counted links as [source readable id, target readable id], sorted. */
  links: [string, string][];
  /**
   * The counted links of which a trace is suspect (a record changed since it was reviewed), sorted:
   * they still count, and need a look before the next release.
   */
  suspect: [string, string][];
}

export interface CoverageReport {
  topics: CoverageTopic[];
  rules: RuleCoverage[];
}
