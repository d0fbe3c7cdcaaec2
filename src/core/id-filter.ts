/**
 * A Bloom filter of strings in a fixed 2 MiB: `mightHold` never says no to a string added, and says
 * yes to one never added rarely (about 1 in 2 000 at a million strings, 1 in 10 at three million).
 * A backfill keeps the ids it stored in one, so that a batch asks the database only about the ids
 * the filter cannot rule out (usually none) instead of probing the index for every id. Pure.
 */

/** 2^24 bits: fixed, so memory does not grow with the history (sync.md S10). */
const BITS = 1 << 24;
const MASK = BITS - 1;
/** Probes per string: the best for about a million strings in 2^24 bits. */
const PROBES = 7;

export class IdFilter {
  readonly #bits = new Uint32Array(BITS / 32);

  add(id: string): void {
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & MASK;
      this.#bits[bit >>> 5] = (this.#bits[bit >>> 5] as number) | (1 << (bit & 31));
    }
  }

  /** False: `id` was never added. True: it may have been. */
  mightHold(id: string): boolean {
    const [h1, h2] = hashes(id);
    for (let i = 0; i < PROBES; i++) {
      const bit = (h1 + Math.imul(i, h2)) & MASK;
      if (((this.#bits[bit >>> 5] as number) & (1 << (bit & 31))) === 0) return false;
    }
    return true;
  }
}

/** Two independent 32-bit hashes of a string (FNV-1a and a multiplicative one), for double hashing. */
function hashes(s: string): [number, number] {
  let a = 0x811c9dc5;
  let b = 0x9e3779b9;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x5bd1e995);
    b ^= b >>> 15;
  }
  // An odd step visits distinct bits on every probe.
  return [a >>> 0, (b | 1) >>> 0];
}
