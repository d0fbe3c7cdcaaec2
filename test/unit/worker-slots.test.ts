/**
 * Schedule slots of the job engine: cron-parser keeps the seconds field, a slot's job id is the same
 * on every replica and differs between tenants, kinds and slots, and the spread offset is stable per
 * tenant and inside its window.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_RECONCILE_SCHEDULE, DEFAULT_SCHEDULE, loadConfig } from '../../src/config/settings.js';
import { validateCron } from '../../src/core/cron.js';
import { ConfigError } from '../../src/core/errors.js';
import { slotAfter, slotAtOrBefore, slotJobId, spreadOffsetMs } from '../../src/worker/slots.js';

describe('schedule slots', () => {
  it('keeps the seconds field of a six-field expression', () => {
    const at = new Date('2026-03-01T10:00:07.500Z');
    expect(slotAtOrBefore('*/5 * * * * *', at)?.toISOString()).toBe('2026-03-01T10:00:05.000Z');
    expect(slotAfter('*/5 * * * * *', at)?.toISOString()).toBe('2026-03-01T10:00:10.000Z');
    expect(slotAfter('*/20 * * * * *', new Date('2026-03-01T10:00:20.000Z'))?.toISOString()).toBe(
      '2026-03-01T10:00:40.000Z',
    );
  });

  it('reads five fields as minutes, in UTC', () => {
    const at = new Date('2026-03-01T10:14:59.000Z');
    expect(slotAtOrBefore('*/15 * * * *', at)?.toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(slotAfter('*/15 * * * *', at)?.toISOString()).toBe('2026-03-01T10:15:00.000Z');
    // A fire time is its own slot.
    expect(slotAtOrBefore('*/15 * * * *', new Date('2026-03-01T10:15:00.000Z'))?.toISOString()).toBe(
      '2026-03-01T10:15:00.000Z',
    );
    expect(slotAtOrBefore('0 3 * * *', at)?.toISOString()).toBe('2026-03-01T03:00:00.000Z');
  });

  it('rejects what is not a cron expression, naming the setting', () => {
    expect(() => validateCron('61 * * * *', 'GOVTRAIL_SCHEDULE')).toThrow(ConfigError);
    expect(() => validateCron('every day', 'GOVTRAIL_RECONCILE_SCHEDULE')).toThrow(
      /GOVTRAIL_RECONCILE_SCHEDULE/,
    );
    expect(() => validateCron('*/10 * * * * *', 'GOVTRAIL_SCHEDULE')).not.toThrow();
  });

  it('ships default schedules that pass the check a set one must pass (a start takes them unchecked)', () => {
    expect(() => validateCron(DEFAULT_SCHEDULE, 'GOVTRAIL_SCHEDULE')).not.toThrow();
    expect(() => validateCron(DEFAULT_RECONCILE_SCHEDULE, 'GOVTRAIL_RECONCILE_SCHEDULE')).not.toThrow();
    // A schedule that is set is still checked, from the environment as from anywhere.
    expect(() => loadConfig({ GOVTRAIL_SCHEDULE: '*/70 * * * *' }, { dotenv: false })).toThrow(
      /GOVTRAIL_SCHEDULE/,
    );
  });

  it('derives one job id per tenant, kind and slot, the same on every call', () => {
    const slot = new Date('2026-03-01T10:00:00.000Z');
    const id = slotJobId('sync', 'acme', slot);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(slotJobId('sync', 'acme', new Date(slot.getTime()))).toBe(id);
    expect(slotJobId('reconcile', 'acme', slot)).not.toBe(id);
    expect(slotJobId('sync', 'acme2', slot)).not.toBe(id);
    expect(slotJobId('sync', 'acme', new Date(slot.getTime() + 1000))).not.toBe(id);
  });

  it('spreads tenants over the window, each at a stable place', () => {
    const window = 5 * 60_000;
    const offsets = Array.from({ length: 500 }, (_, i) => spreadOffsetMs(`t-${i}`, window));
    for (const o of offsets) {
      expect(o).toBeGreaterThanOrEqual(0);
      expect(o).toBeLessThan(window);
    }
    expect(spreadOffsetMs('t-7', window)).toBe(offsets[7]);
    // Spread, not bunched: every fifth of the window holds some tenants.
    for (let k = 0; k < 5; k++) {
      expect(offsets.some((o) => o >= (k * window) / 5 && o < ((k + 1) * window) / 5)).toBe(true);
    }
    expect(spreadOffsetMs('t-7', 0)).toBe(0);
  });
});
