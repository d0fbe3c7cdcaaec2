/**
 * When changes happen in a sandbox history: the gaps between changes (bursts, minutes, hours,
 * days) and the instants they land on, with the mixed timestamp precision of the live service.
 * Shared by the seeded generator and the entries appended at run time.
 */
import { type Random, WeightedTable } from './random.js';
import type { Instant } from './wire.js';

/** Seeded histories are squeezed into about a year when their natural spread would be longer. */
export const TARGET_SPAN_SECONDS = 365 * 86_400;
/** Mean of the unscaled gap distribution in {@link nextGap} (measured: about 1.4 days). */
export const MEAN_GAP_SECONDS = 122_000;

/** Seconds to the next change: a burst (0, same second), minutes, hours or days. */
export function nextGap(rng: Random, scale: number): number {
  const r = rng.next();
  if (r < 0.07) return 0;
  if (r < 0.25) return rng.logUniform(5, 600) * scale;
  if (r < 0.65) return rng.logUniform(1_800, 43_200) * scale;
  return rng.logUniform(86_400, 864_000) * scale;
}

/**
 * The instant `gap` seconds after `prev`, strictly later. Precision varies as on the live
 * service: mostly nanoseconds, sometimes microseconds, milliseconds or whole seconds.
 */
const FRACTION_DIGITS = new WeightedTable([
  [9, 70],
  [6, 18],
  [3, 8],
  [0, 4],
] as const);

export function advance(prev: Instant, gap: number, rng: Random): Instant {
  const digits = FRACTION_DIGITS.pick(rng);
  let seconds: number;
  let nanos: number;
  if (gap === 0) {
    seconds = prev.seconds;
    nanos = prev.nanos + rng.int(1_000, 50_000_000);
  } else {
    const whole = Math.floor(gap);
    seconds = prev.seconds + whole;
    nanos = prev.nanos + Math.floor((gap - whole) * 1e9);
    // Past a few seconds the sub-second part carries no information: make it random.
    if (gap > 5) nanos = rng.int(0, 999_999_999);
  }
  if (nanos >= 1e9) {
    seconds += Math.floor(nanos / 1e9);
    nanos %= 1e9;
  }
  const unit = 10 ** (9 - digits);
  nanos -= nanos % unit;
  if (seconds < prev.seconds || (seconds === prev.seconds && nanos <= prev.nanos)) {
    seconds = prev.seconds;
    nanos = prev.nanos + 1;
    if (nanos >= 1e9) {
      seconds += 1;
      nanos -= 1e9;
    }
  }
  return { seconds, nanos };
}
