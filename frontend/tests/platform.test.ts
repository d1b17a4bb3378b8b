import { describe, expect, it } from 'vitest';
import { followCompletion } from '../src/platform';

describe('followCompletion', () => {
  it('goes to the completion page the server names', () => {
    const visited: string[] = [];
    const url = 'https://app.prolific.com/submissions/complete?cc=ABC123';
    expect(followCompletion({ redirect_url: url }, (u) => visited.push(u))).toBe(true);
    expect(visited).toEqual([url]);
  });

  it('stays without one, and never follows a script address', () => {
    const visited: string[] = [];
    for (const result of [null, {}, { redirect_url: null }, { redirect_url: 'javascript:alert(1)' }]) {
      expect(followCompletion(result, (u) => visited.push(u))).toBe(false);
    }
    expect(visited).toEqual([]);
  });
});
