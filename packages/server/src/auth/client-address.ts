import { BlockList, isIP } from 'node:net';
import type { FastifyRequest } from 'fastify';
import { trustedProxiesFromEnv } from '../config.js';

/** The address of the client a request came from. */
export type ClientAddressOf = (request: FastifyRequest) => string;

/**
 * Where a request came from, for sign-in throttling and the audit log. X-Forwarded-For is believed
 * only as far as it was written by a trusted proxy (addresses or CIDR ranges): walking from the
 * nearest hop outwards, the first address that is not a trusted proxy is the client. With no trusted
 * proxies (the default) the header is ignored, so a client cannot pose as another by sending one.
 */
export function clientAddressResolver(
  trustedProxies: readonly string[] | undefined = trustedProxiesFromEnv(),
): ClientAddressOf {
  const trusted = blockListOf(trustedProxies ?? []);
  const isTrusted = (address: string) => {
    const family = isIP(address);
    return family !== 0 && trusted.check(address, family === 6 ? 'ipv6' : 'ipv4');
  };
  return (request) => {
    let address = normalize(request.socket.remoteAddress ?? request.ip);
    if (!trustedProxies?.length) return address;
    const header = request.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? ''))
      .split(',')
      .map((hop) => normalize(hop.trim()))
      .filter(Boolean);
    while (isTrusted(address) && hops.length > 0) address = hops.pop()!;
    return address;
  };
}

function blockListOf(entries: readonly string[]): BlockList {
  const list = new BlockList();
  for (const entry of entries) {
    const [address = '', prefix] = entry.split('/');
    const family = isIP(address);
    if (family === 0) {
      throw new Error(
        `Trusted proxy "${entry}" is not an IP address or CIDR range; write e.g. 127.0.0.1 or 10.0.0.0/8.`,
      );
    }
    const type = family === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) list.addAddress(address, type);
    else list.addSubnet(address, Number(prefix), type);
  }
  return list;
}

/** IPv4 addresses written as IPv6 (`::ffff:1.2.3.4`) are the same client as `1.2.3.4`. */
function normalize(address: string): string {
  return address.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, '$1');
}
