import { describe, expect, it } from 'vitest';
import { joinUrl, nextPageUrl, normalizeBaseUrl, parseLinkHeader } from './url.js';

describe('joinUrl', () => {
  it('keeps the base path prefix, with or without a trailing slash', () => {
    for (const base of ['https://h/api/v1', 'https://h/api/v1/', 'https://h/api/v1//']) {
      expect(joinUrl(normalizeBaseUrl(base, 'base'), '/kt/x', { a: 1, b: undefined, c: false }).href).toBe(
        'https://h/api/v1/kt/x?a=1&c=false',
      );
    }
    expect(joinUrl(normalizeBaseUrl('http://h:8080', 'base'), '/records/').href).toBe(
      'http://h:8080/records/',
    );
  });
});

describe('Link headers', () => {
  it('finds rel="next" among several links, quoted or not, with several relations', () => {
    expect(parseLinkHeader('<https://h/a?p=2>; rel="next", <https://h/a?p=9>; rel="last"').get('next')).toBe(
      'https://h/a?p=2',
    );
    expect(parseLinkHeader('<?after=1>;rel=next').get('next')).toBe('?after=1');
    expect(parseLinkHeader('<?x=1>; title="a, b"; rel="prev next"').get('next')).toBe('?x=1');
    expect(parseLinkHeader(null).size).toBe(0);
  });

  it('resolves query-only and relative links against the requested URL, refusing other origins', () => {
    const requested = new URL('https://h/prefix/records/?limit=2');
    expect(nextPageUrl('<?limit=2&after=abc>; rel="next"', requested)?.href).toBe(
      'https://h/prefix/records/?limit=2&after=abc',
    );
    expect(nextPageUrl('</prefix/records/?after=z>; rel="next"', requested)?.href).toBe(
      'https://h/prefix/records/?after=z',
    );
    expect(nextPageUrl('<https://h/prefix/records/?p=3>; rel="last"', requested)).toBeUndefined();
    expect(() => nextPageUrl('<https://evil.example/records/>; rel="next"', requested)).toThrow(
      /another origin/,
    );
  });
});
