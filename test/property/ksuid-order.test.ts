/**
 * KSUID text order under COLLATE "C" in PostgreSQL equals time order at one-second resolution,
 * whatever the random payload: the premise of every `collate "C"` KSUID column.
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ksuidTime } from '../../src/core/normalise/ksuid.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const EPOCH = 1_400_000_000;

/** Encodes seconds since the KSUID epoch and a 16-byte payload, independently of src/. */
function encode(seconds: number, payload: Uint8Array): string {
  let n = BigInt(seconds);
  for (const b of payload) n = (n << 8n) | BigInt(b);
  let s = '';
  for (let i = 0; i < 27; i++) {
    s = ALPHABET[Number(n % 62n)] + s;
    n /= 62n;
  }
  return s;
}

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.close();
});

describe('KSUID ordering', () => {
  it('decodes the time it was encoded with', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 2 ** 32 - 1 }),
        fc.uint8Array({ minLength: 16, maxLength: 16 }),
        (s, p) => {
          expect(ksuidTime(encode(s, p))?.getTime()).toBe((s + EPOCH) * 1000);
        },
      ),
    );
  });

  it('order by id collate "C" in PostgreSQL is time order at second resolution', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.tuple(
            // Few distinct seconds, so that many ids share one and only the payload differs.
            fc.oneof(
              fc.integer({ min: 0, max: 2 ** 32 - 1 }),
              fc.integer({ min: 300_000_000, max: 300_000_005 }),
            ),
            fc.uint8Array({ minLength: 16, maxLength: 16 }),
          ),
          { minLength: 2, maxLength: 60 },
        ),
        async (specs) => {
          const ids = specs.map(([s, p]) => encode(s, p));
          const { rows } = await sql<{ id: string }>`
            select id from unnest(${ids}::text[]) as t(id) order by id collate "C"`.execute(t.database.db);
          const sorted = rows.map((r) => r.id);
          const times = sorted.map((id) => ksuidTime(id)?.getTime() ?? Number.NaN);
          for (let i = 1; i < times.length; i++)
            expect(times[i]).toBeGreaterThanOrEqual(times[i - 1] as number);
          // Same multiset, and JS's code-unit order agrees with PostgreSQL's "C" order.
          expect(sorted).toEqual([...ids].sort());
        },
      ),
      { numRuns: 150 },
    );
  });
});
