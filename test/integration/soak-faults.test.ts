/**
 * A short fault-injection soak (the long one is `npm run soak`): a sandbox process with random
 * faults and entries appended throughout, eight `govtrail sync` child processes of which two are
 * killed with SIGKILL mid-run; after one clean run the database equals the sandbox's history.
 */
import { expect, it } from 'vitest';
import { soak } from '../../scripts/soak.js';
import { NEEDS_SERVER, onServer } from '../helpers/database.js';

it.skipIf(!onServer)(
  `eight runs with faults and two SIGKILLs end equal to the truth (${NEEDS_SERVER})`,
  async () => {
    const r = await soak({
      runs: 8,
      kills: 2,
      entries: 500,
      appendMax: 5,
      appendEveryMs: 100,
      maxKillDelayMs: 60,
      seed: 7,
    });
    expect(r.problems).toEqual([]);
    expect(r.mismatches).toBe(0);
    expect(r.runs).toBe(8);
    expect(r.kills).toBe(2);
    expect(r.entries).toBeGreaterThan(500);
  },
  180_000,
);
