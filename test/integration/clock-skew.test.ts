/**
 * A replica whose clock runs ahead judges slots by the database's clock: the skew it measures
 * cancels its own, so `Date.now() + skew` is the database's time, and /metrics shows the skew.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { measureClockSkew } from '../../src/store/read/health.js';
import { createTestDatabase, NEEDS_SERVER, onServer, type TestDatabase } from '../helpers/database.js';

let t: TestDatabase | undefined;
afterEach(async () => {
  vi.restoreAllMocks();
  await t?.close();
  t = undefined;
});

describe.skipIf(!onServer)(`the clock skew (${NEEDS_SERVER})`, () => {
  it('of a host 35 s ahead is -35 s, so the engine clock is the database clock', async () => {
    t = await createTestDatabase();
    const real = Date.now.bind(Date);
    vi.spyOn(Date, 'now').mockImplementation(() => real() + 35_000);
    const skew = await measureClockSkew(t.database.db);
    expect(Math.abs(skew + 35_000)).toBeLessThan(1_000);
    // What the engine reads as now (Date.now() + skew) is within a second of the real time.
    expect(Math.abs(Date.now() + skew - real())).toBeLessThan(1_000);
  });
});
