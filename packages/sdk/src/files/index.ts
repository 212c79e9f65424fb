export {
  earlierLifeOfThisPid,
  earlierProcessSpace,
  processAlive,
  processLife,
  processSpace,
} from './process-space.js';
export {
  isAbandonedTemp,
  makeScratchFolder,
  removeAbandonedTemps,
  tempNameParts,
  tempPath,
  tempPrefix,
} from './temp-files.js';
export { durableWriteStream, fsyncPath, writeFileAtomic } from './durable.js';
