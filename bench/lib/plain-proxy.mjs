/**
 * An HTTP proxy that hides the service's conditional requests: it drops `If-None-Match` on the way
 * in and `ETag` on the way out, so a client behind it sees the service as it was published (no
 * ETags, hence no probe and no changes feed) and takes its full path. For measuring that path beside
 * the cheap one against the same server.
 */
import { createServer, request } from 'node:http';

export async function startPlainProxy(target) {
  const upstream = new URL(target);
  const server = createServer((req, res) => {
    const headers = { ...req.headers, host: upstream.host };
    delete headers['if-none-match'];
    const forward = request(
      { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers },
      (answer) => {
        const out = { ...answer.headers };
        delete out.etag;
        res.writeHead(answer.statusCode, out);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(resolve);
      }),
  };
}
