import { describe, expect, it } from 'vitest';
import {
  MAX_ENTRY_DEPTH,
  nestsDeeperThan,
  pruneDeeperThan,
  tooDeepReason,
} from '../../src/core/normalise/depth.js';

/** `n` arrays nested in one another, the innermost holding `inner`. */
function arrays(n: number, inner: unknown = 1): unknown {
  let v: unknown = inner;
  for (let i = 0; i < n; i++) v = [v];
  return v;
}

/** `n` objects nested under key `k`. */
function objects(n: number, inner: unknown = 1): unknown {
  let v: unknown = inner;
  for (let i = 0; i < n; i++) v = { k: v };
  return v;
}

describe('nestsDeeperThan', () => {
  it('counts an array or object as one level, a scalar as none', () => {
    for (const scalar of [null, undefined, 0, 'x', true]) expect(nestsDeeperThan(scalar, 0)).toBe(false);
    expect(nestsDeeperThan([], 0)).toBe(true);
    expect(nestsDeeperThan({}, 0)).toBe(true);
    expect(nestsDeeperThan([], 1)).toBe(false);
    expect(nestsDeeperThan([1, 'a', null], 1)).toBe(false);
    expect(nestsDeeperThan({ a: 1, b: null }, 1)).toBe(false);
  });

  it('is true exactly past the limit, through arrays and objects alike', () => {
    expect(nestsDeeperThan(arrays(3), 3)).toBe(false);
    expect(nestsDeeperThan(arrays(4), 3)).toBe(true);
    expect(nestsDeeperThan(objects(3), 3)).toBe(false);
    expect(nestsDeeperThan(objects(4), 3)).toBe(true);
    expect(nestsDeeperThan({ a: [{ b: [] }] }, 4)).toBe(false);
    expect(nestsDeeperThan({ a: [{ b: [{}] }] }, 4)).toBe(true);
  });

  it('finds the deep branch among shallow siblings, whichever comes first', () => {
    expect(nestsDeeperThan([1, [2], arrays(5)], 5)).toBe(true);
    expect(nestsDeeperThan([arrays(5), [2], 1], 5)).toBe(true);
    expect(nestsDeeperThan({ a: {}, b: objects(5), c: 1 }, 5)).toBe(true);
    expect(nestsDeeperThan({ a: {}, b: objects(4), c: 1 }, 5)).toBe(false);
  });

  it('measures any depth without overflowing the stack: its recursion stops past the limit', () => {
    expect(nestsDeeperThan(arrays(100_000), MAX_ENTRY_DEPTH)).toBe(true);
    expect(nestsDeeperThan(objects(100_000), MAX_ENTRY_DEPTH)).toBe(true);
    expect(nestsDeeperThan(arrays(MAX_ENTRY_DEPTH - 1), MAX_ENTRY_DEPTH)).toBe(false);
    expect(nestsDeeperThan(arrays(MAX_ENTRY_DEPTH), MAX_ENTRY_DEPTH)).toBe(false);
    expect(nestsDeeperThan(arrays(MAX_ENTRY_DEPTH + 1), MAX_ENTRY_DEPTH)).toBe(true);
  });

  it('takes a limit too large to recurse to, as deep as the value goes', () => {
    expect(nestsDeeperThan(arrays(100_000), 100_000)).toBe(false);
    expect(nestsDeeperThan(objects(100_001), 100_000)).toBe(true);
    expect(nestsDeeperThan({ a: [1, { b: arrays(5_000) }] }, 5_003)).toBe(false);
    expect(nestsDeeperThan({ a: [1, { b: arrays(5_000) }] }, 5_002)).toBe(true);
  });

  it('at the largest limit it recurses to, as above and below it', () => {
    for (const limit of [1023, 1024, 1025]) {
      expect(nestsDeeperThan(arrays(limit), limit)).toBe(false);
      expect(nestsDeeperThan(objects(limit + 1), limit)).toBe(true);
    }
  });
});

describe('pruneDeeperThan', () => {
  it('keeps a value within the limit as it is', () => {
    const v = { a: [1, { b: 'x' }], c: null };
    expect(pruneDeeperThan(v, 3)).toEqual(v);
    expect(pruneDeeperThan('x', 0)).toBe('x');
  });

  it('replaces each array or object below the limit by the marker', () => {
    const marker = '[nested deeper than 2 levels: not kept]';
    expect(pruneDeeperThan({ a: { b: { c: 1 } }, d: [1, [2]], e: 3 }, 2)).toEqual({
      a: { b: marker },
      d: [1, marker],
      e: 3,
    });
    expect(pruneDeeperThan(arrays(MAX_ENTRY_DEPTH + 1))).toEqual(
      arrays(MAX_ENTRY_DEPTH - 1, [`[nested deeper than ${MAX_ENTRY_DEPTH} levels: not kept]`]),
    );
  });

  it('keeps a key named __proto__ as a key', () => {
    const v = JSON.parse('{"__proto__":{"x":[1]},"y":2}') as unknown;
    const pruned = pruneDeeperThan(v, 5) as Record<string, unknown>;
    expect(Object.keys(pruned)).toEqual(['__proto__', 'y']);
    expect(JSON.stringify(pruned)).toBe('{"__proto__":{"x":[1]},"y":2}');
  });
});

describe('tooDeepReason', () => {
  it('names the limit and the marker', () => {
    expect(tooDeepReason()).toBe(
      'nested more than 256 levels deep: kept here with the deeper parts replaced by "[nested deeper than 256 levels: not kept]"',
    );
    expect(tooDeepReason(3)).toBe(
      'nested more than 3 levels deep: kept here with the deeper parts replaced by "[nested deeper than 3 levels: not kept]"',
    );
  });
});
