#!/usr/bin/env node
/**
 * The transfer limit: a plain Node HTTP server that answers every request with the same bytes from
 * memory (the RXS listing, downloaded once). Nothing can send a listing faster over this loopback
 * with this client, so it is the floor the listing is measured against.
 *
 *   node bench/tools/limit-server.mjs FILE PORT
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';

const [file, port] = process.argv.slice(2);
const body = readFileSync(file);
createServer((request, response) => {
  request.resume();
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.length,
  });
  response.end(body);
}).listen(Number(port), '127.0.0.1', () => process.stdout.write(`limit server on ${port}\n`));
