import { connect, type Socket } from 'node:net';

/** A raw TCP connection to the server, for requests fetch will not send slowly: what it received, and when it closed. */
export interface RawConnection {
  socket: Socket;
  received(): string;
  /** Resolves to Date.now() when the connection closes. */
  closed: Promise<number>;
}

export function rawConnection(url: string): Promise<RawConnection> {
  const { hostname, port } = new URL(url);
  return new Promise((resolve, reject) => {
    const socket = connect(Number(port), hostname, () => {
      let text = '';
      socket.on('data', (chunk: Buffer) => (text += chunk.toString('latin1')));
      // The server may cut the connection while bytes are still being written to it.
      socket.on('error', () => {});
      const closed = new Promise<number>((done) => socket.once('close', () => done(Date.now())));
      resolve({ socket, received: () => text, closed });
    });
    socket.once('error', reject);
  });
}
