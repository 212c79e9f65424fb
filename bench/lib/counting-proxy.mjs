/**
 * A plain HTTP proxy that counts the bytes on the wire between a client and a server: request and
 * response, head and body, as the sockets carry them. For measuring what a poll sends and receives.
 */
import { createServer, connect } from 'node:net';

export async function startCountingProxy(target) {
  const upstream = new URL(target);
  const counts = { sent: 0, received: 0, connections: 0 };
  const server = createServer((client) => {
    counts.connections++;
    const remote = connect(Number(upstream.port), upstream.hostname);
    client.on('data', (chunk) => (counts.sent += chunk.length));
    remote.on('data', (chunk) => (counts.received += chunk.length));
    client.pipe(remote);
    remote.pipe(client);
    const end = () => {
      client.destroy();
      remote.destroy();
    };
    client.on('error', end);
    remote.on('error', end);
    client.on('close', end);
    remote.on('close', end);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    /** The bytes counted since the last call, and resets the count. */
    take() {
      const taken = { ...counts, total: counts.sent + counts.received };
      counts.sent = counts.received = counts.connections = 0;
      return taken;
    },
    close: () => new Promise((resolve) => server.close(resolve)),
  };
}
