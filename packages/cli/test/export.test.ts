import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  statSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../../server/test/harness.js';
import { tempPath } from '@rxs/exchange/export';
import { cliBin, runCli } from './run-cli.js';

describe('rxs export against the real server', () => {
  let t: TestServer;
  let dir: string;
  let keyFile: string;
  let requirements: string;
  let tests: string;
  const exportArgs = (...args: string[]) => [
    'export',
    '--url',
    t.url,
    '--api-key-file',
    keyFile,
    '--quiet',
    ...args,
  ];

  beforeAll(async () => {
    t = await startTestServer();
    dir = mkdtempSync(join(tmpdir(), 'rxs-export-'));
    keyFile = join(dir, 'owner.key');
    writeFileSync(keyFile, `${t.ownerKey}\n`);
    requirements = t.demo.tenant.topics.systemRequirements!.currentRevisionId;
    tests = t.demo.tenant.topics.verificationTests!.currentRevisionId;
  });
  afterAll(async () => {
    await t.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('json: the full snapshot with schema, mapping, semantic records, traces, time and servers', async () => {
    const out = join(dir, 'all.json');
    const result = await runCli(
      exportArgs('--kt', requirements, '--kt', tests, '--traces', '--format', 'json', '--out', out, '--json'),
    );
    expect(result.code, result.stderr).toBe(0);
    const summary = JSON.parse(result.stdout);
    expect(summary.topics.map((x: { records: number }) => x.records)).toEqual([4, 4]);
    const snapshot = JSON.parse(readFileSync(out, 'utf8'));
    const servers = Object.fromEntries(
      Object.entries(snapshot.servers).map(([k, v]) => [k, String(v).replace(/\/$/, '')]),
    );
    expect(servers).toEqual({ techdoc: t.url, records: t.url, tracer: t.url });
    expect(Date.parse(snapshot.exportedAt)).toBeGreaterThan(Date.now() - 60_000);
    const [reqTopic, testTopic] = snapshot.topics;
    expect(reqTopic.revisionId).toBe(requirements);
    expect(reqTopic.schema.components.length).toBeGreaterThan(5);
    // The mapping, by the document's rules: label here, service-key where given, never a hardcoded key.
    const byKey = Object.fromEntries(
      reqTopic.fields.map((f: { key: string; name: string }) => [f.key, f.name]),
    );
    expect(byKey).toMatchObject({
      name: 'Name',
      checklist_kgd0ri: 'Requirement concerning',
      select_vm8x2p: 'verification_method',
    });
    expect(reqTopic.records[0].values).toMatchObject({
      Name: expect.stringContaining('REQ_001'),
      'Requirement concerning': ['Equipment'],
    });
    const testFields = Object.fromEntries(
      testTopic.fields.map((f: { key: string; name: string }) => [f.key, f.name]),
    );
    expect(testFields).toMatchObject({
      textfield_k2j4h1: 'test_id',
      radio_7yq2mw: 'verdict',
      textfield_9vd1sa: 'Title',
    });
    expect(snapshot.traces).toHaveLength(4);
    expect(JSON.stringify(snapshot)).not.toContain(t.ownerKey);
  });

  it('csv: one row per record, columns by semantic name', async () => {
    const out = join(dir, 'reqs.csv');
    expect((await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', out))).code).toBe(0);
    const lines = readFileSync(out, 'utf8')
      .replace(/^\uFEFF/, '')
      .trim()
      .split(/\r?\n/);
    expect(lines).toHaveLength(5);
    expect(lines[0]).toContain('Requirement concerning');
    expect(lines[0]).not.toContain('checklist_kgd0ri');
  });

  it('xlsx: a sheet per topic', async () => {
    const out = join(dir, 'all.xlsx');
    expect(
      (
        await runCli(
          exportArgs('--kt', requirements, '--kt', tests, '--traces', '--format', 'xlsx', '--out', out),
        )
      ).code,
    ).toBe(0);
    const workbook = new ExcelJS.Workbook();
    await workbook.xlsx.readFile(out);
    const names = workbook.worksheets.map((w) => w.name);
    expect(names).toEqual(expect.arrayContaining(['System Requirements', 'Verification Tests']));
    expect(workbook.getWorksheet('Verification Tests')!.actualRowCount).toBe(5);
  });

  it('reqif: valid against the ReqIF 1.2 schema, with relations from traces', async () => {
    const out = join(dir, 'all.reqif');
    expect(
      (
        await runCli(
          exportArgs('--kt', requirements, '--kt', tests, '--traces', '--format', 'reqif', '--out', out),
        )
      ).code,
    ).toBe(0);
    const xsd = new URL('../../../reference/reqif-xsd/reqif.xsd', import.meta.url).pathname;
    execFileSync('xmllint', ['--noout', '--schema', xsd, out], { stdio: 'pipe' });
    const xml = readFileSync(out, 'utf8');
    expect(xml.match(/<SPEC-OBJECT /g)).toHaveLength(8);
    expect(xml.match(/<SPEC-RELATION /g)).toHaveLength(4);
    expect(xml.match(/<SPECIFICATION /g)).toHaveLength(2);
  });

  it('needs: a Sphinx-Needs needs.json with links from traces', async () => {
    const out = join(dir, 'needs.json');
    expect(
      (
        await runCli(
          exportArgs('--kt', requirements, '--kt', tests, '--traces', '--format', 'needs', '--out', out),
        )
      ).code,
    ).toBe(0);
    const needs = JSON.parse(readFileSync(out, 'utf8'));
    const version = needs.versions[needs.current_version];
    expect(Object.keys(version.needs)).toHaveLength(8);
    // Each trace once: under `links`, or under the link type of the trace model's role that names it.
    const properties: Record<string, { field_type?: string }> = version.needs_schema?.properties ?? {};
    const options = [
      'links',
      ...Object.keys(properties).filter(
        (name) => name !== 'links' && properties[name]!.field_type === 'links',
      ),
    ];
    const links = Object.values(version.needs).flatMap((n: any) => options.flatMap((o) => n[o] ?? []));
    expect(links).toHaveLength(4);
    for (const link of links) expect(version.needs[link as string]).toBeDefined();
  });

  it('a re-approved topic stops the export with the revision to use; --follow-latest exports it', async () => {
    const old = t.demo.tenant.topics.systemRequirements!.oldRevisionIds[0]!;
    const out = join(dir, 'old.json');
    const refused = await runCli(exportArgs('--kt', old, '--out', out));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`re-approved`);
    expect(refused.stderr).toContain(requirements);
    expect(existsSync(out)).toBe(false);
    const followed = await runCli(exportArgs('--kt', old, '--follow-latest', '--out', out, '--json'));
    expect(followed.code, followed.stderr).toBe(0);
    expect(JSON.parse(followed.stdout).topics[0]).toMatchObject({ revisionId: requirements, records: 4 });
  });

  it('a history id gets the 404 that names the revision id; a bad key says to regenerate it', async () => {
    const history = await runCli(exportArgs('--kt', t.demo.tenant.topics.systemRequirements!.historyId));
    expect(history.code).toBe(1);
    expect(history.stderr).toContain(requirements);
    const badKey = join(dir, 'bad.key');
    writeFileSync(badKey, 'rxs_0000000000000000_' + 'x'.repeat(43));
    const refused = await runCli(['export', '--url', t.url, '--api-key-file', badKey, '--kt', requirements]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Regenerate the key/);
    expect(refused.stderr).not.toContain('x'.repeat(43));
  });

  it('an empty topic is a success with a warning about the id', async () => {
    const created = await t.api('POST', '/kt/', {
      body: {
        knowledge_topic_name: 'Empty',
        type: 'multi_record',
        knowledge_topic_schema: { components: [] },
      },
    });
    const result = await runCli(exportArgs('--kt', created.body._id, '--out', join(dir, 'empty.json')));
    expect(result.code).toBe(0);
    expect(result.stderr).toMatch(/no records.*revision id/s);
  });

  it('configuration from environment variables and a profile; the key never printed', async () => {
    const env = {
      RXS_TECHDOC_URL: t.url,
      RXS_RECORDS_URL: t.url,
      RXS_TRACER_URL: t.url,
      RXS_API_KEY: t.ownerKey,
    };
    const viaEnv = await runCli(['export', '--kt', requirements, '--out', join(dir, 'env.json'), '--json'], {
      env,
    });
    expect(viaEnv.code, viaEnv.stderr).toBe(0);
    const config = join(dir, 'config.json');
    writeFileSync(
      config,
      JSON.stringify({ defaultProfile: 'demo', profiles: { demo: { url: t.url, apiKeyFile: keyFile } } }),
    );
    const viaProfile = await runCli([
      'export',
      '--kt',
      requirements,
      '--out',
      join(dir, 'profile.json'),
      '--config',
      config,
    ]);
    expect(viaProfile.code, viaProfile.stderr).toBe(0);
    for (const output of [viaEnv.stdout, viaEnv.stderr, viaProfile.stdout, viaProfile.stderr])
      expect(output).not.toContain(t.ownerKey);
    const missing = await runCli(['export', '--kt', requirements, '--url', t.url]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/No API key/);
  });

  it('an interrupted export leaves the previous output intact', async () => {
    const out = join(dir, 'keep.json');
    writeFileSync(out, 'previous export\n');
    // The records service address is wrong: the export fails after the schema was fetched.
    const failed = await runCli([
      'export',
      '--techdoc-url',
      t.url,
      '--records-url',
      'http://127.0.0.1:1',
      '--tracer-url',
      t.url,
      '--api-key-file',
      keyFile,
      '--kt',
      requirements,
      '--out',
      out,
      '--retries',
      '0',
    ]);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toMatch(/Could not reach the records service/);
    expect(readFileSync(out, 'utf8')).toBe('previous export\n');
    expect(execFileSync('ls', ['-a', dir]).toString()).not.toMatch(/\.tmp/);
  });

  it('an output in a folder that is missing, or not a folder, is refused with a message (export and sync), no stack trace', async () => {
    const missing = join(dir, 'no-such-folder', 'reqs.csv');
    const notFolder = join(dir, 'keep.json', 'reqs.csv'); // keep.json is a file
    writeFileSync(join(dir, 'keep.json'), 'previous export\n');
    const existingFolder = join(dir, 'a-folder');
    mkdirSync(existingFolder, { recursive: true });
    for (const [out, reason] of [
      [missing, /the folder .*no-such-folder does not exist\. Create it/],
      [notFolder, /keep\.json is not a folder/],
      [existingFolder, /a-folder: it names a folder\. Name a file in it/],
      [`${join(dir, 'new-folder')}/`, /new-folder\/: it names a folder\. Name a file in it/],
    ] as const) {
      const exported = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', out));
      expect(exported.code).toBe(1);
      expect(exported.stderr).toMatch(reason);
      expect(exported.stderr).not.toMatch(/\n\s+at /);
      const state = join(dir, 'missing-out-state');
      const synced = await runCli([
        'sync',
        ...exportArgs('--kt', requirements, '--format', 'csv', '--out', out, '--state', state).slice(1),
      ]);
      expect(synced.code).toBe(1);
      expect(synced.stderr).toMatch(reason);
      expect(synced.stderr).not.toMatch(/\n\s+at /);
      expect(readdirSync(state).filter((name) => !name.startsWith('.') || name.endsWith('.tmp'))).toEqual([]);
    }
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
    expect(existsSync(join(dir, 'new-folder'))).toBe(false);
  });

  it('an output named by a symbolic link replaces the file the link points to, also one not there yet; a loop of links is a message', async () => {
    const shared = join(dir, 'linked-share');
    const links = join(dir, 'linked-names');
    mkdirSync(shared);
    mkdirSync(links);
    // A link to an earlier export, by a relative path; a link to a file not written yet.
    writeFileSync(join(shared, 'reqs.csv'), 'previous export\n');
    symlinkSync('../linked-share/reqs.csv', join(links, 'current.csv'));
    symlinkSync(join(shared, 'new.csv'), join(links, 'next.csv'));
    symlinkSync('loop-b.csv', join(links, 'loop-a.csv'));
    symlinkSync('loop-a.csv', join(links, 'loop-b.csv'));

    for (const [name, file] of [
      ['current.csv', 'reqs.csv'],
      ['next.csv', 'new.csv'],
    ] as const) {
      const result = await runCli(
        exportArgs('--kt', requirements, '--format', 'csv', '--out', join(links, name)),
      );
      expect(result.code, result.stderr).toBe(0);
      const written = readFileSync(join(shared, file), 'utf8');
      expect(written.split('\n')[0]).toMatch(/^\ufeff_id,readable_id,/);
      expect(readlinkSync(join(links, name))).toMatch(new RegExp(`${file.replace('.', '\\.')}$`));
    }
    expect(readdirSync(links).sort()).toEqual(['current.csv', 'loop-a.csv', 'loop-b.csv', 'next.csv']);
    expect(readdirSync(shared).sort()).toEqual(['new.csv', 'reqs.csv']);

    const looped = await runCli(exportArgs('--kt', requirements, '--out', join(links, 'loop-a.csv')));
    expect(looped.code).toBe(1);
    expect(looped.stderr).toMatch(/loop-a\.csv: ELOOP: too many symbolic links/);
    expect(looped.stderr).not.toMatch(/\n\s+at /);
  });

  it('links are followed component by component as the kernel does: a ".." after a folder link leaves the folder it led to; a link to a folder says so', async () => {
    const base = join(dir, 'dotdot');
    mkdirSync(join(base, 'proj', 'data'), { recursive: true });
    symlinkSync('proj/data', join(base, 'current'));
    symlinkSync('../reqs.csv', join(base, 'proj', 'data', 'out.csv'));
    writeFileSync(join(base, 'proj', 'reqs.csv'), 'previous export\n');
    writeFileSync(join(base, 'reqs.csv'), 'not this one\n');
    const result = await runCli(
      exportArgs('--kt', requirements, '--format', 'csv', '--out', join(base, 'current', 'out.csv')),
    );
    expect(result.code, result.stderr).toBe(0);
    expect(readFileSync(join(base, 'proj', 'reqs.csv'), 'utf8')).toMatch(/^\ufeff_id,/);
    expect(readFileSync(join(base, 'reqs.csv'), 'utf8')).toBe('not this one\n');

    symlinkSync('proj', join(base, 'to-folder'));
    const folder = await runCli(exportArgs('--kt', requirements, '--out', join(base, 'to-folder')));
    expect(folder.code).toBe(1);
    expect(folder.stderr).toMatch(/to-folder: it names a folder/);
  });

  it('a device or named pipe is written into, never replaced by a file: --out /dev/stdout, a FIFO another program reads, a link to it', async () => {
    // Through a shell's pipe, as a user runs it (a socket as standard output cannot be opened).
    const command = [cliBin, ...exportArgs('--kt', requirements, '--format', 'csv', '--out', '/dev/stdout')]
      .map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    // Not spawnSync: the server answering it runs in this process.
    const shell = spawn('sh', ['-c', `${command} | cat`]);
    const toStdout = { stdout: '', stderr: '', status: null as number | null };
    shell.stdout.on('data', (chunk: Buffer) => (toStdout.stdout += chunk.toString()));
    shell.stderr.on('data', (chunk: Buffer) => (toStdout.stderr += chunk.toString()));
    toStdout.status = await new Promise((resolve) => shell.on('close', resolve));
    expect(toStdout.status, toStdout.stderr).toBe(0);
    expect(toStdout.stdout).toMatch(/^\ufeff_id,readable_id,/);
    const socket = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', '/dev/stdout'));
    expect(socket.code).toBe(1);
    expect(socket.stderr).toMatch(
      /Cannot write \/dev\/stdout: .*ENXIO.* To write to standard output, use --out -\./,
    );
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    symlinkSync(fifo, join(dir, 'pipe-link.csv'));
    for (const out of [fifo, join(dir, 'pipe-link.csv')]) {
      // The reader: a program of its own, as the other end of a pipe is.
      const reader = spawn('cat', [fifo]);
      let read = '';
      reader.stdout.on('data', (chunk: Buffer) => (read += chunk.toString()));
      const done = new Promise((resolve) => reader.on('close', resolve));
      const result = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', out));
      await done;
      expect(result.code, result.stderr).toBe(0);
      expect(read).toMatch(/^\ufeff_id,readable_id,/);
      expect(lstatSync(fifo).isFIFO()).toBe(true);
    }
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it("a replaced output keeps this user's permissions (private stays private, read-only stays read-only); another user's file gives none, nor its owner", async () => {
    for (const mode of [0o600, 0o444]) {
      const out = join(dir, `kept-${mode.toString(8)}.csv`);
      writeFileSync(out, 'previous export\n');
      chmodSync(out, mode);
      const result = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', out));
      expect(result.code, result.stderr).toBe(0);
      expect(readFileSync(out, 'utf8')).toMatch(/^\ufeff_id,/);
      expect(statSync(out).mode & 0o777).toBe(mode);
    }
    if (process.getuid?.() === 0) {
      // Planted by another user, open to all: root's export is root's, with the usual permissions.
      const planted = join(dir, 'planted.csv');
      writeFileSync(planted, '');
      chownSync(planted, 65534, 65534);
      chmodSync(planted, 0o6777);
      const result = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', planted));
      expect(result.code, result.stderr).toBe(0);
      expect(statSync(planted).uid).toBe(0);
      expect(statSync(planted).mode & 0o7777).toBe(0o644);
    }
  });

  it('a program reading the named pipe that stops early, or a full disk, is a message, not a crash nor a silent exit 0', async () => {
    for (const format of ['json', 'xlsx']) {
      const fifo = join(dir, `short.${format}`);
      execFileSync('mkfifo', [fifo]);
      const reader = spawn('head', ['-c', '10', fifo]);
      const done = new Promise((resolve) => reader.on('close', resolve));
      const result = await runCli(exportArgs('--kt', requirements, '--format', format, '--out', fifo));
      await done;
      expect(result.code, format).toBe(1);
      expect(result.stderr).toMatch(
        /Cannot write .*short\.\w+: the program reading it stopped before the end \(EPIPE\)/,
      );
      expect(result.stderr).not.toMatch(/\n\s+at /);
    }
    if (existsSync('/dev/full')) {
      const full = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', '/dev/full'));
      expect(full.code).toBe(1);
      expect(full.stderr).toMatch(/Cannot write \/dev\/full: the disk is full/);
    }
    // Standard output (--out -) full, or closed by its reader: through a shell, as users run it.
    const command = [cliBin, ...exportArgs('--kt', requirements, '--format', 'json', '--out', '-')]
      .map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    for (const [redirect, said] of [
      ['> /dev/full', /rxs: cannot write standard output: the disk is full/],
      ['| true', /rxs: standard output was closed before the end/],
    ] as const) {
      if (redirect.includes('/dev/full') && !existsSync('/dev/full')) continue;
      // Not spawnSync: the server answering it runs in this process.
      const shell = spawn('bash', ['-c', `${command} ${redirect}; echo "rc=\${PIPESTATUS[0]}" >&2`]);
      let stderr = '';
      shell.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      await new Promise((resolve) => shell.on('close', resolve));
      expect(stderr, redirect).toMatch(said);
      expect(stderr, redirect).toMatch(/rc=1/);
      expect(stderr, redirect).not.toMatch(/\n\s+at /);
    }
  });

  it("/dev/stdout appended by the shell (>>) is appended to, not replaced; 'file/../x' is refused as the kernel refuses it; a 240-byte name works", async () => {
    const log = join(dir, 'appended.log');
    writeFileSync(log, 'earlier line\n');
    const command = [cliBin, ...exportArgs('--kt', requirements, '--format', 'csv', '--out', '/dev/stdout')]
      .map((arg) => `'${arg.replace(/'/g, `'\\''`)}'`)
      .join(' ');
    const shell = spawn('sh', ['-c', `${command} >> '${log}'`]); // not spawnSync: the server is in this process
    expect(await new Promise((resolve) => shell.on('close', resolve))).toBe(0);
    const appended = readFileSync(log, 'utf8');
    expect(appended.startsWith('earlier line\n\ufeff_id,readable_id,')).toBe(true);

    writeFileSync(join(dir, 'a-file'), 'x');
    const dotdot = await runCli(
      exportArgs(
        '--kt',
        requirements,
        '--out',
        `${dir}/a-file/../z.csv` /* not join: it would drop the .. */,
      ),
    );
    expect(dotdot.code).toBe(1);
    expect(dotdot.stderr).toMatch(/a-file\/\.\. is not a folder\. Name a file in an existing folder/);
    expect(existsSync(join(dir, 'z.csv'))).toBe(false);

    const long = join(dir, `${'r'.repeat(236)}.csv`);
    const written = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', long));
    expect(written.code, written.stderr).toBe(0);
    expect(readFileSync(long, 'utf8')).toMatch(/^\ufeff_id,/);
  });

  it("a killed export's half-written file and spooled rows are removed by the next export there once a day old, not a live one's", async () => {
    const folder = join(dir, 'killed');
    mkdirSync(folder);
    const out = join(folder, 'reqs.csv');
    const temps = {
      killed: tempPath(out),
      live: tempPath(out),
      otherOutput: tempPath(join(folder, 'other.csv')),
    };
    for (const name of Object.values(temps)) writeFileSync(name, 'half written');
    // The folder an export spools its rows in, beside the output: a killed one's and a live one's.
    const spools = {
      killed: tempPath(join(folder, 'rxs-export')),
      live: tempPath(join(folder, 'rxs-export')),
    };
    for (const name of Object.values(spools)) {
      mkdirSync(name);
      writeFileSync(join(name, 'rows.csv'), 'half written');
    }
    const dayAgo = (Date.now() - 25 * 60 * 60 * 1000) / 1000;
    for (const name of [temps.killed, temps.otherOutput, spools.killed]) utimesSync(name, dayAgo, dayAgo);
    const result = await runCli(exportArgs('--kt', requirements, '--format', 'csv', '--out', out));
    expect(result.code, result.stderr).toBe(0);
    expect(readdirSync(folder).sort()).toEqual(
      [basename(temps.live), basename(spools.live), 'reqs.csv'].sort(),
    );
  });
});
