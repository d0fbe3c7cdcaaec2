/**
 * A slot whose time comes while the database is down is planned when it returns: the planner tries
 * again (1 s, doubling) instead of logging "could not plan the slot" and waiting for the next one.
 */
import { describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/runtime/logger.js';
import { DEFAULT_TUNING, type EngineState } from '../../src/worker/engine-setup.js';
import { armPlanner } from '../../src/worker/planner.js';

describe('the slot planner', () => {
  it('plans a daily reconcile slot once the database answers again', async () => {
    const inserted: string[] = [];
    let failures = 2;
    const state = {
      options: { tenants: async () => [{ name: 'acme' }], spreadMs: 0 },
      tuning: DEFAULT_TUNING,
      logger: silentLogger,
      now: Date.now,
      embedded: false,
      boss: {
        async insert(_queue: string, jobs: Array<{ id: string }>) {
          if (failures-- > 0) throw new Error('connect ECONNREFUSED 127.0.0.1:5432');
          inserted.push(...jobs.map((j) => j.id));
          return jobs.map((j) => j.id);
        },
        getWipData: () => [],
        notifyWorker() {},
      },
      timers: new Set<NodeJS.Timeout>(),
      nextSlots: new Map(),
      roster: new Map(),
      draining: false,
      started: true,
      stopped: undefined,
    } as unknown as EngineState;
    // Daily at the next whole second's time of day: the slot is due in under a second.
    const at = new Date(Math.ceil((Date.now() + 200) / 1000) * 1000);
    const schedule = `${at.getUTCSeconds()} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`;
    armPlanner(state, 'reconcile', schedule, new Date(at.getTime() - 1000));
    const deadline = Date.now() + 8_000;
    while (inserted.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    state.draining = true;
    for (const t of state.timers) clearTimeout(t);
    expect(inserted).toHaveLength(1);
    expect(failures).toBe(-1);
  }, 15_000);
});
