/** SIGHUP reloads are coalesced: never two at once, and a burst makes at most one more. */
import { describe, expect, it } from 'vitest';
import { createReloader } from '../../src/app/worker-process.js';

describe('the SIGHUP reloader', () => {
  it('turns 20 quick requests into two reloads, one after the other', async () => {
    let reloads = 0;
    let running = 0;
    let overlapped = false;
    const reloader = createReloader(async () => {
      reloads++;
      running++;
      if (running > 1) overlapped = true;
      await new Promise((resolve) => setTimeout(resolve, 30));
      running--;
    });
    for (let i = 0; i < 20; i++) reloader.request();
    await reloader.idle();
    expect(reloads).toBe(2);
    expect(overlapped).toBe(false);
    // A later request reloads again.
    reloader.request();
    await reloader.idle();
    expect(reloads).toBe(3);
  });

  it('goes on after a reload that fails', async () => {
    let calls = 0;
    const reloader = createReloader(async () => {
      calls++;
      if (calls === 1) throw new Error('deadlock detected');
    });
    reloader.request();
    await reloader.idle();
    reloader.request();
    await reloader.idle();
    expect(calls).toBe(2);
  });
});
