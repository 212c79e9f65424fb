#!/usr/bin/env node
/**
 * The second half of the export's transfer limit: read a downloaded listing and JSON.parse it once
 * (the first half is `curl -o FILE`). Prints the record count.
 *
 *   node bench/tools/parse-once.mjs FILE
 */
import { readFileSync } from 'node:fs';

const records = JSON.parse(readFileSync(process.argv[2], 'utf8'));
process.stdout.write(`${records.length}\n`);
