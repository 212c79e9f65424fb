import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const bin = fileURLToPath(new URL('../../cli/dist/bin.js', import.meta.url));

export interface Replica {
  url: string;
  child: ChildProcess;
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `rxs serve` as a real process (the built CLI) and waits until it listens. */
export async function startReplica(args: string[], env: NodeJS.ProcessEnv = {}): Promise<Replica> {
  const child = spawn(process.execPath, [bin, 'serve', '--port', '0', '--log-level', 'warn', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...env },
  });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const wantsDemo = args.includes('--demo');
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`rxs serve did not start: ${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      const match = /RXS is running at (http:\/\/\S+)/.exec(output);
      if (match && (!wantsDemo || output.includes('Try:'))) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`rxs serve exited with ${code}: ${output}`));
    });
  });
  return {
    url,
    child,
    async stop(signal = 'SIGTERM') {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}
