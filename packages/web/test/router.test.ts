import { describe, expect, it } from 'vitest';
import { matchPath, paths } from '../src/router';

describe('router', () => {
  it('matches patterns with parameters and an optional trailing slash', () => {
    expect(matchPath('/topics/:historyId/records/:recordId', '/topics/abc/records/def')).toEqual({
      historyId: 'abc',
      recordId: 'def',
    });
    expect(matchPath('/topics', '/topics/')).toEqual({});
    expect(matchPath('/topics/:historyId', '/topics/abc/records')).toBeUndefined();
    expect(matchPath('/topics/:id', '/topics/a%20b')).toEqual({ id: 'a b' });
  });

  it('never builds a path the services own, so a reload reaches the app', () => {
    const built = [
      paths.topics(),
      paths.topic('h'),
      paths.records('h'),
      paths.record('h', 'r'),
      paths.newRecord('h'),
      paths.design('h'),
      paths.exports(['a', 'b']),
      paths.keys(),
      paths.users(),
      paths.account(),
    ];
    for (const path of built) expect(path).not.toMatch(/^\/(kt|records|traces|api|assets|docs)(\/|$)/);
  });
});
