/**
 * The exported records as the traces' ends: each record a number (its place in the export), with
 * its id, readable id and topic. Per record two strings it already has and a number, never the record.
 */
export class RecordEnds {
  /** Record ids by number, in export order (a record listed twice has two numbers). */
  readonly ids: string[] = [];
  private readonly readableIds: string[] = [];
  private readonly topics: number[] = [];
  private readonly numbers = new Map<string, number>();

  /** A record as it is exported, in topic number `topic`; listed again, its latest listing counts. */
  add(id: string, readableId: string, topic: number): void {
    this.numbers.set(id, this.ids.length);
    this.ids.push(id);
    this.readableIds.push(readableId);
    this.topics.push(topic);
  }

  /** The number of the exported record with this id, if there is one. */
  numberOf(id: string): number | undefined {
    return this.numbers.get(id);
  }

  readableIdOf(record: number): string {
    return this.readableIds[record]!;
  }

  topicOf(record: number): number {
    return this.topics[record]!;
  }
}
