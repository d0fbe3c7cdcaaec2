/**
 * KSUID helpers: 27 base62 characters encoding 20 bytes — a 4-byte big-endian count of seconds
 * since 2014-05-13T16:53:20Z, then 16 random bytes. Byte order of the text equals time order at
 * one-second resolution (hence `COLLATE "C"` on every KSUID column). Pure.
 */

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KSUID_EPOCH = 1_400_000_000;
const KSUID_TEXT = /^[0-9A-Za-z]{27}$/;

/** Decodes a KSUID's timestamp; undefined when the text is not a KSUID. */
export function ksuidTime(id: string): Date | undefined {
  if (!KSUID_TEXT.test(id)) return undefined;
  let n = 0n;
  for (const ch of id) n = n * 62n + BigInt(ALPHABET.indexOf(ch));
  if (n >> 160n !== 0n) return undefined;
  const seconds = Number(n >> 128n);
  return new Date((seconds + KSUID_EPOCH) * 1000);
}

/** True when the text has the shape of a KSUID. */
export function isKsuid(id: string): boolean {
  return ksuidTime(id) !== undefined;
}
