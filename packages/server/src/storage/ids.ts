import { randomBytes } from 'node:crypto';

// MongoDB-style ObjectIds: 4 bytes of seconds, 5 random bytes chosen once per process, 3 bytes of a
// counter. Ids sort by creation time and stay unique across replicas without coordination.
const processUnique = randomBytes(5);
let counter = randomBytes(3).readUIntBE(0, 3);

export function newObjectId(now: number = Date.now()): string {
  const id = Buffer.alloc(12);
  id.writeUInt32BE(Math.floor(now / 1000) >>> 0, 0);
  processUnique.copy(id, 4);
  counter = (counter + 1) % 0x1000000;
  id.writeUIntBE(counter, 9, 3);
  return id.toString('hex');
}

export function nowIso(): string {
  return new Date().toISOString();
}
