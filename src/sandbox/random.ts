/**
 * Seeded pseudo-random numbers for the sandbox. Everything the sandbox invents (history, ids,
 * fault draws) comes from here so that one seed reproduces one history byte for byte. Not for
 * secrets: credentials and token keys use node:crypto.
 */

function absorb(h: number, part: number): number {
  // Numbers above 2^32 (large seeds) must still influence the hash: fold the high word in too.
  const low = part >>> 0;
  const high = Math.floor(part / 4294967296) >>> 0;
  let x = Math.imul(h ^ low, 0x85ebca6b);
  x = (x ^ (x >>> 13)) >>> 0;
  x = Math.imul(x ^ high, 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/**
 * Mixes up to three numbers into one well-distributed 32-bit word (murmur3 finaliser over a
 * running hash). Fixed arity: it runs twice per entry served, and a rest parameter allocates.
 */
export function mix(a: number, b = 0, c = 0): number {
  let h = absorb(absorb(absorb(0x9e3779b9, a), b), c);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

const HEX_SCRATCH = Buffer.alloc(64);

/**
 * sfc32 (Chris Doty-Humphrey's small fast counting generator): four 32-bit words of state,
 * fast in JavaScript, and good enough statistically for simulated data.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  /** A generator whose whole stream is fixed by `seed` (and an optional sub-stream number). */
  constructor(seed: number, stream = 0) {
    this.a = mix(seed, stream, 1);
    this.b = mix(seed, stream, 2);
    this.c = mix(seed, stream, 3);
    this.d = 1;
    // The first outputs of sfc32 are correlated with the seed words; discard them.
    for (let i = 0; i < 12; i++) this.u32();
  }

  /** Uniform 32-bit unsigned integer. */
  u32(): number {
    const t = (((this.a + this.b) >>> 0) + this.d) >>> 0;
    this.d = (this.d + 1) >>> 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) >>> 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) >>> 0;
    return t;
  }

  /** Uniform float in [0, 1). */
  next(): number {
    return this.u32() / 4294967296;
  }

  /** Uniform integer in [min, max] (both inclusive). */
  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  /** True with probability p. */
  chance(p: number): boolean {
    return this.next() < p;
  }

  /** Log-uniform float in [min, max): realistic for waiting times that span orders of magnitude. */
  logUniform(min: number, max: number): number {
    return min * (max / min) ** this.next();
  }

  /** One element, uniformly. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new RangeError('pick from an empty list');
    return item;
  }

  /** One value, with probability proportional to its weight. */
  weighted<T>(items: readonly (readonly [T, number])[]): T {
    let total = 0;
    for (const [, w] of items) total += w;
    let r = this.next() * total;
    for (const [value, w] of items) {
      r -= w;
      if (r < 0) return value;
    }
    const last = items[items.length - 1];
    if (last === undefined) throw new RangeError('weighted pick from an empty list');
    return last[0];
  }

  /** `n` random bytes. */
  bytes(n: number): Uint8Array {
    const out = new Uint8Array(n);
    for (let i = 0; i < n; i += 4) {
      const v = this.u32();
      out[i] = v >>> 24;
      if (i + 1 < n) out[i + 1] = (v >>> 16) & 0xff;
      if (i + 2 < n) out[i + 2] = (v >>> 8) & 0xff;
      if (i + 3 < n) out[i + 3] = v & 0xff;
    }
    return out;
  }

  /** `n` (at most 128) lowercase hexadecimal characters, as one flat string. */
  hex(n: number): string {
    const bytes = Math.ceil(n / 2);
    for (let i = 0; i < bytes; i += 4) HEX_SCRATCH.writeUInt32BE(this.u32(), i);
    const text = HEX_SCRATCH.toString('hex', 0, bytes);
    return n % 2 === 0 ? text : text.slice(0, n);
  }
}

/** A fixed weighted choice, prepared once: picking costs one draw and a short scan, no allocation. */
export class WeightedTable<T> {
  private readonly values: readonly T[];
  private readonly cumulative: Float64Array;

  constructor(items: readonly (readonly [T, number])[]) {
    if (items.length === 0) throw new RangeError('a weighted table needs at least one item');
    this.values = items.map(([v]) => v);
    this.cumulative = new Float64Array(items.length);
    let total = 0;
    items.forEach(([, w], i) => {
      total += w;
      this.cumulative[i] = total;
    });
  }

  /** One value, with probability proportional to its weight. */
  pick(rng: Random): T {
    const r = rng.next() * this.cumulative[this.cumulative.length - 1]!;
    for (let i = 0; i < this.cumulative.length; i++) if (r < this.cumulative[i]!) return this.values[i]!;
    return this.values[this.values.length - 1]!;
  }
}
