import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../cli/dist/bin.js', import.meta.url));

/** Starts `rxs serve --demo` as a real process and waits for its banner. */
async function serve(dataDir: string): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(
    process.execPath,
    [bin, 'serve', '--demo', '--port', '0', '--data-dir', dataDir, '--log-level', 'warn'],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no banner: ${output}`)), 20_000);
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /RXS is running at (http:\/\/\S+)/.exec(output);
      if (match && output.includes('Try:')) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`exited ${code}: ${output}`)));
  });
  return { child, url };
}

describe('an acknowledged write survives a crash of the process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'rxs-crash-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('records acknowledged with 201 are all there after SIGKILL and restart', async () => {
    const acknowledged: string[] = [];
    for (let round = 0; round < 3; round++) {
      const { child, url } = await serve(dataDir);
      const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
      const key = demo.tenant.users.owner.apiKey;
      const revision = demo.tenant.topics.systemRequirements.currentRevisionId;
      // Everything acknowledged before the crash must be present afterwards.
      const listing = await fetch(`${url}/records/?context__knowledge_unit_topic_id=${revision}`, {
        headers: { 'x-api-key': key },
      });
      const present = new Set(((await listing.json()) as { _id: string }[]).map((r) => r._id));
      for (const id of acknowledged) expect(present.has(id)).toBe(true);

      // Writes in flight when the process is killed: only 201s count as acknowledged.
      let firstAck: () => void = () => undefined;
      const acked = new Promise<void>((r) => (firstAck = r));
      const writes = Array.from({ length: 40 }, (_, i) =>
        fetch(`${url}/records/`, {
          method: 'POST',
          headers: { 'x-api-key': key, 'content-type': 'application/json' },
          body: JSON.stringify({
            name: `crash-${round}-${i}`,
            form: {},
            data: { name: `r${i}` },
            context: { knowledge_unit_topic_id: revision },
          }),
        })
          .then(async (res) => {
            if (res.status === 201) {
              acknowledged.push(((await res.json()) as { _id: string })._id);
              firstAck();
            }
          })
          .catch(() => undefined),
      );
      // Kill mid-stream: once writes are being acknowledged, at a random moment.
      await acked;
      await new Promise((r) => setTimeout(r, Math.random() * 20));
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGKILL');
      await Promise.all(writes);
      await exited;
    }
    expect(acknowledged.length).toBeGreaterThan(0);
    const { child, url } = await serve(dataDir);
    const demo = JSON.parse(readFileSync(join(dataDir, 'demo.json'), 'utf8'));
    const res = await fetch(`${url}/records/?id__in=${acknowledged.slice(0, 1000).join(',')}`, {
      headers: { 'x-api-key': demo.tenant.users.owner.apiKey },
    });
    expect(((await res.json()) as unknown[]).length).toBe(Math.min(acknowledged.length, 1000));
    const exited = new Promise((r) => child.once('exit', r));
    child.kill('SIGTERM');
    await exited;
  }, 60_000);
});
