/**
 * KSUIDs as the real service mints them (segmentio/ksuid): 20 bytes — a 4-byte big-endian count of seconds
 * since 1400000000 (2014-05-13T16:53:20Z) followed by 16 random bytes — written as 27 base62 digits over
 * `0-9A-Za-z`. The alphabet is in ASCII order and the text is fixed-width, so comparing the strings byte by
 * byte is comparing the numbers: KSUID order is time order to the second, and random within a second. The
 * sandbox has its own implementation on purpose (docs/design/style.md, the sandbox rule): a shared helper
 * would hide a misreading on both sides of the wire.
 */

/** Unix time (seconds) of KSUID timestamp 0. */
export const KSUID_EPOCH = 1_400_000_000;
/** Length of the text form. */
export const KSUID_LENGTH = 27;
/** Length of the binary form. */
export const KSUID_BYTES = 20;

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const ALPHABET_CODES = Uint8Array.from(ALPHABET, (c) => c.charCodeAt(0));
const DIGIT_OF = new Int8Array(128).fill(-1);
for (let i = 0; i < ALPHABET.length; i++) DIGIT_OF[ALPHABET.charCodeAt(i)] = i;
const WORD = 4294967296;

/** Two base62 digits for every value below 62²: the high and the low character code. */
const PAIR_HIGH = new Uint8Array(62 * 62);
const PAIR_LOW = new Uint8Array(62 * 62);
for (let i = 0; i < 62 * 62; i++) {
  PAIR_HIGH[i] = ALPHABET_CODES[Math.floor(i / 62)]!;
  PAIR_LOW[i] = ALPHABET_CODES[i % 62]!;
}
const DIGITS = new Array<number>(KSUID_LENGTH).fill(0);

/** Encodes 20 KSUID bytes as 27 base62 characters. */
export function encodeKsuid(bytes: Uint8Array): string {
  if (bytes.length !== KSUID_BYTES)
    throw new RangeError(`a KSUID has ${KSUID_BYTES} bytes, not ${bytes.length}`);
  // The 160-bit number as five 32-bit words, most significant first, divided by 62² per pass
  // (two digits at a time: a million ids are encoded at start-up and several per entry served).
  let w0 = ((bytes[0]! << 24) | (bytes[1]! << 16) | (bytes[2]! << 8) | bytes[3]!) >>> 0;
  let w1 = ((bytes[4]! << 24) | (bytes[5]! << 16) | (bytes[6]! << 8) | bytes[7]!) >>> 0;
  let w2 = ((bytes[8]! << 24) | (bytes[9]! << 16) | (bytes[10]! << 8) | bytes[11]!) >>> 0;
  let w3 = ((bytes[12]! << 24) | (bytes[13]! << 16) | (bytes[14]! << 8) | bytes[15]!) >>> 0;
  let w4 = ((bytes[16]! << 24) | (bytes[17]! << 16) | (bytes[18]! << 8) | bytes[19]!) >>> 0;
  const BASE = 62 * 62;
  for (let i = KSUID_LENGTH - 1; i >= 0; i -= 2) {
    // Every intermediate stays below 62² · 2³², well inside a double's exact integers.
    let v = w0;
    let q = Math.floor(v / BASE);
    let rem = v - q * BASE;
    w0 = q;
    v = rem * WORD + w1;
    q = Math.floor(v / BASE);
    rem = v - q * BASE;
    w1 = q;
    v = rem * WORD + w2;
    q = Math.floor(v / BASE);
    rem = v - q * BASE;
    w2 = q;
    v = rem * WORD + w3;
    q = Math.floor(v / BASE);
    rem = v - q * BASE;
    w3 = q;
    v = rem * WORD + w4;
    q = Math.floor(v / BASE);
    rem = v - q * BASE;
    w4 = q;
    DIGITS[i] = PAIR_LOW[rem]!;
    // 14 passes yield 28 digits; the 28th (leading) one is always 0 and dropped.
    if (i > 0) DIGITS[i - 1] = PAIR_HIGH[rem]!;
  }
  // fromCharCode yields a flat one-byte string: a million stored ids must not be rope strings.
  return String.fromCharCode.apply(null, DIGITS);
}

/** Decodes a 27-character KSUID into its 20 bytes; throws on anything else. */
export function decodeKsuid(text: string): Uint8Array {
  if (text.length !== KSUID_LENGTH) throw new RangeError(`a KSUID has ${KSUID_LENGTH} characters`);
  const words = [0, 0, 0, 0, 0];
  for (let i = 0; i < KSUID_LENGTH; i++) {
    const code = text.charCodeAt(i);
    const digit = code < 128 ? DIGIT_OF[code]! : -1;
    if (digit < 0) throw new RangeError(`not a base62 character: ${JSON.stringify(text[i])}`);
    let carry = digit;
    for (let w = 4; w >= 0; w--) {
      const v = words[w]! * 62 + carry;
      carry = Math.floor(v / WORD);
      words[w] = v - carry * WORD;
    }
    if (carry !== 0) throw new RangeError('KSUID value out of range');
  }
  const out = new Uint8Array(KSUID_BYTES);
  for (let w = 0; w < 5; w++) {
    const v = words[w]!;
    out[w * 4] = v >>> 24;
    out[w * 4 + 1] = (v >>> 16) & 0xff;
    out[w * 4 + 2] = (v >>> 8) & 0xff;
    out[w * 4 + 3] = v & 0xff;
  }
  return out;
}

/** The KSUID of Unix second `unixSeconds` with the given 16-byte payload. */
export function ksuidAt(unixSeconds: number, payload: Uint8Array): string {
  const stamp = Math.floor(unixSeconds) - KSUID_EPOCH;
  if (stamp < 0 || stamp >= WORD)
    throw new RangeError('time outside the KSUID range (2014-05-13 to 2150-06-19)');
  if (payload.length !== 16) throw new RangeError('a KSUID payload has 16 bytes');
  const bytes = new Uint8Array(KSUID_BYTES);
  bytes[0] = stamp >>> 24;
  bytes[1] = (stamp >>> 16) & 0xff;
  bytes[2] = (stamp >>> 8) & 0xff;
  bytes[3] = stamp & 0xff;
  bytes.set(payload, 4);
  return encodeKsuid(bytes);
}

/** Unix seconds encoded in a KSUID. */
export function ksuidSeconds(text: string): number {
  const b = decodeKsuid(text);
  return (((b[0]! << 24) | (b[1]! << 16) | (b[2]! << 8) | b[3]!) >>> 0) + KSUID_EPOCH;
}
