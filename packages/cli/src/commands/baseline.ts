import { Command } from 'commander';
import type { Baseline } from '@rxs/contract';
import { BaselineNotFoundError } from '@rxs/client';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';
import { UserError } from '../errors.js';
import { collect } from './export.js';

interface BaselineCreateOptions extends ConnectionOptions {
  kt: string[];
  description?: string;
  at?: string;
  json?: boolean;
}

interface BaselineReadOptions extends ConnectionOptions {
  json?: boolean;
}

/** `rxs baseline create|list|show`: named, immutable moments over knowledge topics. */
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

Examples:
  rxs baseline create v1.0 --profile prod --kt REQS_REV --kt TESTS_REV --description "Design freeze"
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
        `${baseline.name}  ${baseline.at}  ${baseline.knowledge_topic_revision_ids.length} topic(s)  ${baseline.description}\n`,
      );
  });

  const show = new Command('show')
    .description('Show one baseline')
    .argument('<name-or-id>', 'its name or id')
    .option('--json', 'as JSON');
  addConnectionOptions(show).action(async (nameOrId: string, options: BaselineReadOptions) => {
    try {
      print(await clientFor(resolveConnection(options)).techdoc.findBaseline(nameOrId), options.json);
    } catch (error) {
      if (error instanceof BaselineNotFoundError) throw new UserError(error.message);
      throw error;
    }
  });

  return command.addCommand(create).addCommand(list).addCommand(show);
}

function print(baseline: Baseline, json: boolean | undefined): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(baseline, null, 2)}\n`);
    return;
  }
  process.stdout.write(
    [
      `Baseline ${baseline.name} (${baseline._id})`,
      `  at:          ${baseline.at}`,
      `  revisions:   ${baseline.knowledge_topic_revision_ids.join(', ')}`,
      `  description: ${baseline.description || '—'}`,
      `  created by ${baseline.created_by} at ${baseline.created_at}`,
      `  export it:   rxs export --baseline ${JSON.stringify(baseline.name)} --format json`,
      '',
    ].join('\n'),
  );
}
