import type { FastifyRequest } from 'fastify';
import { describe, expect, it } from 'vitest';
import { secureCookiePolicy } from './guard.js';
import { exportFileName } from './routes/export.js';

const request = (protocol: 'http' | 'https') => ({ protocol }) as FastifyRequest;

describe('secure cookie policy', () => {
  it('follows the request by default, so plain-http localhost keeps working', () => {
    const policy = secureCookiePolicy({});
    expect(policy(request('http'))).toBe(false);
    expect(policy(request('https'))).toBe(true);
  });

  it('is forced by RXS_SECURE_COOKIES or implied by an https RXS_PUBLIC_URL', () => {
    expect(secureCookiePolicy({ RXS_SECURE_COOKIES: '1' })(request('http'))).toBe(true);
    expect(secureCookiePolicy({ RXS_SECURE_COOKIES: 'false' })(request('https'))).toBe(false);
    expect(secureCookiePolicy({ RXS_PUBLIC_URL: 'https://rxs.example' })(request('http'))).toBe(true);
  });
});

describe('export file names', () => {
  it('are safe in a header and on disk', () => {
    const date = new Date('2026-03-04T05:06:07Z');
    expect(exportFileName(['System Requirements'], 'csv', date)).toBe(
      'rxs-system-requirements-2026-03-04.csv',
    );
    expect(exportFileName(['Ä "quoted"/../x'], 'reqif', date)).toBe('rxs-a-quoted-x-2026-03-04.reqif');
    expect(exportFileName(['a', 'b'], 'xlsx', date)).toBe('rxs-2-topics-2026-03-04.xlsx');
    expect(exportFileName(['***'], 'json', date)).toBe('rxs-topic-2026-03-04.json');
  });
});
