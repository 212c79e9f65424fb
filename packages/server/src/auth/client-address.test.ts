import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { clientAddressResolver } from './client-address.js';

const request = (remoteAddress: string, forwardedFor?: string) =>
  ({
    ip: remoteAddress,
    socket: { remoteAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as FastifyRequest;

describe('clientAddressResolver', () => {
  it('ignores X-Forwarded-For without trusted proxies', () => {
    const resolve = clientAddressResolver([]);
    expect(resolve(request('203.0.113.5', '198.51.100.1'))).toBe('203.0.113.5');
  });

  it('walks X-Forwarded-For from the nearest hop past trusted proxies only', () => {
    const resolve = clientAddressResolver(['10.0.0.0/8', '::1']);
    // The client forged the first entry; the proxy appended the real one.
    expect(resolve(request('10.0.0.2', '6.6.6.6, 198.51.100.1, 10.0.0.9'))).toBe('198.51.100.1');
    expect(resolve(request('::1', '198.51.100.2'))).toBe('198.51.100.2');
    expect(resolve(request('::ffff:10.1.1.1', '198.51.100.3'))).toBe('198.51.100.3');
    // A connection from outside the list is the client, whatever it claims.
    expect(resolve(request('203.0.113.7', '198.51.100.1'))).toBe('203.0.113.7');
  });

  it('refuses a trusted proxy that is no address or range, saying how to write one', () => {
    expect(() => clientAddressResolver(['proxy.local'])).toThrow(/not an IP address or CIDR range/);
  });
});
