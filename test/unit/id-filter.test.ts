import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { IdFilter } from '../../src/core/id-filter.js';
import { encodeKsuid } from '../../src/sandbox/ksuid.js';

const someId = (): string => encodeKsuid(randomBytes(20));

describe('IdFilter', () => {
  it('never rules out an id it holds, and rules out nearly every other one', () => {
    const f = new IdFilter();
    const held: string[] = [];
    for (let i = 0; i < 200_000; i++) held.push(someId());
    for (const id of held) f.add(id);
    expect(held.every((id) => f.mightHold(id))).toBe(true);
    let wrong = 0;
    for (let i = 0; i < 100_000; i++) if (f.mightHold(someId())) wrong++;
    // 7 probes into 2^24 bits at 200 000 ids: about 2 in a million.
    expect(wrong).toBeLessThan(20);
  });

  it('holds nothing when empty, and tells apart ids that differ in one character', () => {
    const f = new IdFilter();
    expect(f.mightHold('2F8ZQbJ3oZkXn0mC1cT2y4q8Ab1')).toBe(false);
    f.add('2F8ZQbJ3oZkXn0mC1cT2y4q8Ab1');
    expect(f.mightHold('2F8ZQbJ3oZkXn0mC1cT2y4q8Ab1')).toBe(true);
    expect(f.mightHold('2F8ZQbJ3oZkXn0mC1cT2y4q8Ab2')).toBe(false);
    expect(f.mightHold('')).toBe(false);
  });
});
