import { Command } from 'commander';
import type { Trace, TraceEvent } from '@rxs/contract';
import { clientFor } from '../client.js';
import { addConnectionOptions, resolveConnection, type ConnectionOptions } from '../connection.js';

interface TraceReviewOptions extends ConnectionOptions {
  comment?: string;
  json?: boolean;
}

interface TraceHistoryOptions extends ConnectionOptions {
  json?: boolean;
}

/** `rxs trace show|review|history`: one trace, and the review of a suspect link. */
export function traceCommand(): Command {
  const command = new Command('trace')
    .description('One trace: whether it is suspect, its review, its history')
    .addHelpText(
      'after',
      `
A trace is suspect when a record at either end changed since the trace was made or last reviewed.
rxs trace-report lists suspect links per rule; review each once its records are checked.

Examples:
  rxs trace show --profile prod 6b03f3c2a1b4c5d6e7f80912
  rxs trace review --profile prod 6b03f3c2a1b4c5d6e7f80912 --comment "Test still covers the 1 s stop"
  rxs trace history --profile prod 6b03f3c2a1b4c5d6e7f80912`,
    );

  const show = new Command('show')
    .description('A trace: its ends, relation type, and whether it is suspect')
    .argument('<id>', 'the trace id')
    .option('--json', 'as JSON');
  addConnectionOptions(show).action(async (id: string, options: TraceHistoryOptions) => {
    const trace = await clientFor(resolveConnection(options)).tracer.getTrace(id);
    process.stdout.write(options.json ? `${JSON.stringify(trace, null, 2)}\n` : traceText(trace));
  });

  const review = new Command('review')
    .description("Review a trace: it holds for its records as they are now; clears 'suspect'")
    .argument('<id>', 'the trace id')
    .option('--comment <text>', "why the link still holds; kept in the trace's history")
    .option('--json', 'the trace after the review, as JSON');
  addConnectionOptions(review).action(async (id: string, options: TraceReviewOptions) => {
    const trace = await clientFor(resolveConnection(options)).tracer.reviewTrace(id, options.comment);
    process.stdout.write(
      options.json
        ? `${JSON.stringify(trace, null, 2)}\n`
        : `Reviewed; no longer suspect.\n${traceText(trace)}`,
    );
  });

  const history = new Command('history')
    .description('Every event of a trace, oldest first: made, made suspect, reviewed, deleted')
    .argument('<id>', 'the trace id (also of a deleted trace)')
    .option('--json', 'as a JSON array');
  addConnectionOptions(history).action(async (id: string, options: TraceHistoryOptions) => {
    const events = await clientFor(resolveConnection(options)).tracer.traceHistory(id);
    process.stdout.write(
      options.json ? `${JSON.stringify(events, null, 2)}\n` : events.map(eventText).join(''),
    );
  });

  return command.addCommand(show).addCommand(review).addCommand(history);
}

function traceText(trace: Trace): string {
  const status =
    trace.outdated === undefined
      ? 'unknown (the service keeps no reviews)'
      : trace.outdated
        ? 'SUSPECT'
        : 'reviewed';
  return (
    `Trace ${trace._id}: ${trace.source.node_type} ${trace.source.node_id} ` +
    `-[${trace.relation_type}]-> ${trace.target.node_type} ${trace.target.node_id}\n` +
    `Status: ${status}\n`
  );
}

const ACTIONS: Record<TraceEvent['action'], string> = {
  created: 'made',
  suspect: 'suspect: a record changed',
  reviewed: 'reviewed',
  deleted: 'deleted',
};

function eventText(event: TraceEvent): string {
  const who = event.user_email ?? event.user_id;
  const why = event.reason ? ` — ${event.reason.replace(/\s+/g, ' ')}` : '';
  return `${event.at}  ${ACTIONS[event.action] ?? event.action}  by ${who}${why}\n`;
}
