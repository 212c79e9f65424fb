import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * The thread's program: a connection of its own to the file; each message asks for one PASSIVE
 * checkpoint (committed WAL frames copied into the database file, which is then synced; it never
 * waits for readers or writers). The answer is sent when it is done, or the thread fails.
 */
const THREAD_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const SQLite = require(workerData.driver);
const db = new SQLite(workerData.file);
parentPort.on('message', (message) => {
  if (message === 'close') {
    db.close();
    parentPort.close();
    return;
  }
  db.pragma('wal_checkpoint(PASSIVE)');
  parentPort.postMessage('done');
});
`;

export interface Checkpointer {
  /** One checkpoint, run in the thread; rejects if the thread has failed. */
  checkpoint(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Checkpoints of the SQLite file `file`, in a thread of their own: copying megabytes into the
 * database file and syncing it then never holds the event loop (SQLite's auto-checkpoint runs them
 * inside a commit, on the thread that commits).
 */
export function checkpointer(file: string): Checkpointer {
  const worker = new Worker(THREAD_SOURCE, {
    eval: true,
    workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3'), file },
  });
  // The thread keeps the process alive only while a checkpoint is under way.
  worker.unref();
  const waiting: { resolve: () => void; reject: (error: Error) => void }[] = [];
  let failure: Error | undefined;
  /** Once closing, the thread keeps the process alive until it has ended. */
  let closing = false;
  const fail = (error: Error) => {
    failure ??= error;
    for (const { reject } of waiting.splice(0)) reject(failure);
  };
  worker.on('message', () => {
    waiting.shift()?.resolve();
    if (waiting.length === 0 && !closing) worker.unref();
  });
  worker.on('error', (error) => fail(new Error(`SQLite checkpoint of ${file} failed: ${error.message}`)));
  const exited = new Promise<void>((resolve) =>
    worker.once('exit', () => {
      fail(new Error(`the SQLite checkpoint thread of ${file} has stopped`));
      resolve();
    }),
  );
  return {
    checkpoint() {
      if (failure) return Promise.reject(failure);
      worker.ref();
      const done = new Promise<void>((resolve, reject) => waiting.push({ resolve, reject }));
      worker.postMessage('checkpoint');
      return done;
    },
    async close() {
      closing = true;
      if (!failure) {
        worker.ref();
        worker.postMessage('close');
      }
      await exited;
    },
  };
}
