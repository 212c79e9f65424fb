import { Command, Option } from 'commander';
import { APPROVAL_MEANINGS, type ApprovalMeaning, type Baseline } from '@rxs/contract';
import { BaselineNotFoundError, type RxsClient } from '@rxs/client';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';
import { readPassword } from './admin.js';
import { collect } from './export.js';
import { printable } from './history.js';

interface BaselineCreateOptions extends ConnectionOptions {
  kt: string[];
  description?: string;
  at?: string;
  json?: boolean;
}

interface BaselineProposeOptions extends BaselineCreateOptions {
  signer?: string[];
  reviewer?: string[];
  supersedes?: string;
}

interface BaselineReadOptions extends ConnectionOptions {
  json?: boolean;
}

interface BaselineDecisionOptions extends BaselineReadOptions {
  passwordStdin?: boolean;
  reason?: string;
}

interface BaselineSignOptions extends BaselineDecisionOptions {
  meaning: ApprovalMeaning;
}

/** `rxs baseline create|propose|sign|refuse|list|show`: named, immutable moments over knowledge topics. */
export function baselineCommand(): Command {
  const command = new Command('baseline')
    .description(
      'Baselines: name a moment over some topics (e.g. v1.0) to export it again, unchanged, at any time',
    )
    .addHelpText(
      'after',
      `
A baseline names its topics' revision ids and a moment. It never changes: exporting it
(rxs export --baseline NAME) gives, byte for byte, the export taken at that moment; rxs sync
--since NAME compares it with another baseline or with now.

A proposed baseline is released once each required signer has signed with the meaning asked of
them (approved, or reviewed), re-entering their web password; one refusal ends the proposal, and
a new one may supersede it. A baseline made with create has no signers and is released at once.

Examples:
  rxs baseline create v1.0 --profile prod --kt REQS_REV --kt TESTS_REV --description "Design freeze"
  rxs baseline propose v2.0 --profile prod --kt REQS_REV --signer qa@acme.example --reviewer dev@acme.example
  rxs baseline sign v2.0 --profile qa --meaning approved --password-stdin < password.txt
  rxs baseline show v2.0 --profile prod
  rxs baseline list --profile prod
  rxs export --profile prod --baseline v1.0 --format reqif --out v1.0.reqif`,
    );

  const create = new Command('create')
    .description('Create a baseline over KT revisions, at now or at a past moment')
    .argument('<name>', 'unique in the tenant, e.g. v1.0')
    .requiredOption('--kt <revision-id>', 'KT revision id it covers (repeat, or comma separate)', collect)
    .option('--description <text>', 'what the baseline is, e.g. "Design freeze for the 510(k) submission"')
    .option('--at <time>', 'the moment it names (ISO 8601; default: now), not in the future')
    .option('--json', 'print the baseline as JSON');
  addConnectionOptions(create).action(async (name: string, options: BaselineCreateOptions) => {
    const client = clientFor(resolveConnection(options));
    const baseline = await client.techdoc.createBaseline({
      name,
      knowledge_topic_revision_ids: options.kt,
      ...(options.description !== undefined && { description: options.description }),
      ...(options.at !== undefined && { at: options.at }),
    });
    print(baseline, options.json);
  });

  const propose = new Command('propose')
    .description('Propose a baseline for review: released once every required signer has signed')
    .argument('<name>', 'unique in the tenant, e.g. v2.0')
    .requiredOption('--kt <revision-id>', 'KT revision id it covers (repeat, or comma separate)', collect)
    .option('--signer <email>', 'a user who must sign it as "approved" (repeat)', collect)
    .option('--reviewer <email>', 'a user who must sign it as "reviewed" (repeat)', collect)
    .option('--supersedes <name-or-id>', 'the earlier baseline it replaces')
    .option('--description <text>', 'what the baseline is')
    .option('--at <time>', 'the moment it names (ISO 8601; default: now), not in the future')
    .option('--json', 'print the baseline as JSON');
  addConnectionOptions(propose).action(async (name: string, options: BaselineProposeOptions) => {
    const signers = [
      ...(options.signer ?? []).map((user) => ({ user, meaning: 'approved' as const })),
      ...(options.reviewer ?? []).map((user) => ({ user, meaning: 'reviewed' as const })),
    ];
    if (signers.length === 0)
      throw new UserError(
        'Name who must sign with --signer EMAIL (approves) or --reviewer EMAIL (reviews); a baseline without signers is made with rxs baseline create.',
      );
    const client = clientFor(resolveConnection(options));
    const supersedes =
      options.supersedes === undefined ? undefined : (await find(client, options.supersedes))._id;
    const baseline = await client.techdoc.createBaseline({
      name,
      knowledge_topic_revision_ids: options.kt,
      signers,
      ...(supersedes !== undefined && { supersedes }),
      ...(options.description !== undefined && { description: options.description }),
      ...(options.at !== undefined && { at: options.at }),
    });
    print(baseline, options.json);
  });

  const sign = new Command('sign')
    .description('Sign a proposed baseline you were asked to sign, with your web password')
    .argument('<name-or-id>', 'its name or id')
    .addOption(
      new Option('--meaning <meaning>', 'what your signature means: the meaning asked of you')
        .choices([...APPROVAL_MEANINGS])
        .makeOptionMandatory(),
    )
    .option('--password-stdin', 'read your web sign-in password from standard input (required)')
    .option('--reason <text>', 'why you sign, kept with the signature')
    .option('--json', 'print the baseline as JSON');
  addConnectionOptions(sign).action(async (nameOrId: string, options: BaselineSignOptions) => {
    const password = await passwordFromStdin(options);
    const client = clientFor(resolveConnection(options));
    const baseline = await find(client, nameOrId);
    const signed = await client.techdoc.signBaseline(baseline._id, {
      meaning: options.meaning,
      password,
      ...(options.reason !== undefined && { reason: options.reason }),
    });
    print(signed, options.json);
  });

  const refuse = new Command('refuse')
    .description('Refuse a proposed baseline you were asked to sign; that ends the proposal')
    .argument('<name-or-id>', 'its name or id')
    .requiredOption('--reason <text>', 'why you refuse, kept with the baseline')
    .option('--password-stdin', 'read your web sign-in password from standard input (required)')
    .option('--json', 'print the baseline as JSON');
  addConnectionOptions(refuse).action(async (nameOrId: string, options: BaselineDecisionOptions) => {
    const password = await passwordFromStdin(options);
    const client = clientFor(resolveConnection(options));
    const baseline = await find(client, nameOrId);
    print(
      await client.techdoc.refuseBaseline(baseline._id, { reason: options.reason ?? '', password }),
      options.json,
    );
  });

  const list = new Command('list').description('List the baselines').option('--json', 'as a JSON array');
  addConnectionOptions(list).action(async (options: BaselineReadOptions) => {
    const baselines = await clientFor(resolveConnection(options)).techdoc.listBaselines();
    if (options.json) {
      process.stdout.write(`${JSON.stringify(baselines, null, 2)}\n`);
      return;
    }
    if (baselines.length === 0) {
      process.stdout.write('No baselines yet. Create one with: rxs baseline create NAME --kt REVISION_ID\n');
      return;
    }
    for (const baseline of baselines)
      process.stdout.write(
        `${baseline.name}  ${baseline.at}  ${baseline.knowledge_topic_revision_ids.length} topic(s)  ${baseline.description}${baseline.status === 'released' ? '' : `  (${baseline.status})`}\n`,
      );
  });

  const show = new Command('show')
    .description('Show one baseline')
    .argument('<name-or-id>', 'its name or id')
    .option('--json', 'as JSON');
  addConnectionOptions(show).action(async (nameOrId: string, options: BaselineReadOptions) => {
    print(await find(clientFor(resolveConnection(options)), nameOrId), options.json);
  });

  return command
    .addCommand(create)
    .addCommand(propose)
    .addCommand(sign)
    .addCommand(refuse)
    .addCommand(list)
    .addCommand(show);
}

async function find(client: RxsClient, nameOrId: string): Promise<Baseline> {
  try {
    return await client.techdoc.findBaseline(nameOrId);
  } catch (error) {
    if (error instanceof BaselineNotFoundError) throw new UserError(error.message);
    throw error;
  }
}

/** The password is read from standard input only: on the command line, others could see it. */
async function passwordFromStdin(options: BaselineDecisionOptions): Promise<string> {
  if (!options.passwordStdin)
    throw new UserError(
      'Give your web sign-in password on standard input with --password-stdin (e.g. < password.txt); it signs as you.',
    );
  const password = await readPassword(options);
  if (!password) throw new UserError('Standard input held no password.');
  return password;
}

function print(baseline: Baseline, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(baseline, null, 2)}\n`);
    return;
  }
  const lines = [
    `Baseline ${baseline.name} (${baseline._id})`,
    `  status:      ${statusLine(baseline)}`,
    `  at:          ${baseline.at}`,
    `  revisions:   ${baseline.knowledge_topic_revision_ids.join(', ')}`,
    `  description: ${oneLine(baseline.description) || '—'}`,
    `  created by ${baseline.created_by} at ${baseline.created_at}`,
  ];
  if (baseline.supersedes) lines.push(`  supersedes:  ${baseline.supersedes}`);
  // A server from before baseline review sends no status and no signers: its baselines are released.
  const signers = baseline.required_signers ?? [];
  if (signers.length > 0) {
    lines.push('  signers:');
    for (const signer of signers) {
      const signature = baseline.signatures.find((s) => s.user_id === signer.user_id);
      const state = signature
        ? `signed ${signature.meaning} at ${signature.signed_at}${signature.reason ? ` (${oneLine(signature.reason)})` : ''}`
        : baseline.refusal?.user_id === signer.user_id
          ? `refused at ${baseline.refusal.refused_at}: ${oneLine(baseline.refusal.reason)}`
          : 'not signed yet';
      lines.push(`    ${signer.email} (${signer.meaning}): ${state}`);
    }
  }
  lines.push(`  export it:   rxs export --baseline ${JSON.stringify(baseline.name)} --format json`, '');
  process.stdout.write(lines.join('\n'));
}

/** Text someone typed, on one line of the terminal, shown as text. */
function oneLine(text: string): string {
  return printable(text).replace(/\r?\n/g, ' ');
}

function statusLine(baseline: Baseline): string {
  if (baseline.status === undefined) return 'released';
  if (baseline.status === 'released') return `released at ${baseline.released_at}`;
  if (baseline.status === 'refused') return `refused by ${baseline.refusal!.email}`;
  const waiting = baseline.required_signers.length - baseline.signatures.length;
  return `proposed: waiting for ${waiting} of ${baseline.required_signers.length} signature(s)`;
}
