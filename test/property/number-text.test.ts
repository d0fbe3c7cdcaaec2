/**
 * Properties of number-text.ts: for any double, the text govtrail stores reads back as the same
 * value and passes the scan; any other spelling of that value is found, naming both texts. (That
 * jsonb stores exactly canonicalNumberText is checked against PostgreSQL in
 * test/integration/tamper-number-text.test.ts.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalNumberText, firstNonCanonicalNumber } from '../../src/core/normalise/number-text.js';

if (process.env['CI']) fc.configureGlobal({ seed: 20_261_128 });

const finite = fc.double({ noNaN: true, noDefaultInfinity: true });

/** The exact decimal value of a finite double, without exponent (`0.1` → `0.1000000000000000055511…`). */
function exactDecimal(x: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const negative = bits >> 63n === 1n;
  const biased = Number((bits >> 52n) & 0x7ffn);
  const fraction = bits & ((1n << 52n) - 1n);
  const mantissa = biased === 0 ? fraction : fraction | (1n << 52n);
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  let text: string;
  if (exponent >= 0) text = (mantissa << BigInt(exponent)).toString();
  else {
    const k = -exponent;
    const digits = (mantissa * 5n ** BigInt(k)).toString().padStart(k + 1, '0');
    const fractionDigits = digits.slice(-k).replace(/0+$/, '');
    text = fractionDigits === '' ? digits.slice(0, -k) : `${digits.slice(0, -k)}.${fractionDigits}`;
  }
  return negative ? `-${text}` : text;
}

/** Other spellings of x's canonical text `c` (each checked to read back as x). */
function otherSpellings(x: number, c: string): string[] {
  const point = c.includes('.');
  const candidates = [
    point ? `${c}0` : `${c}.0`,
    point ? `${c}000000000000000000001` : `${c}.000000000000000000001`,
    exactDecimal(x),
    `${c}e0`,
    `${c.replace('.', '')}e-${point ? c.length - c.indexOf('.') - 1 : 0}`,
    x === 0 ? '-0' : c,
    x === 0 ? '0.0' : c,
  ];
  return candidates.filter((s) => s !== c && Number(s) === x);
}

describe('canonicalNumberText', () => {
  it('reads back as the same value, and stored raw holding it passes', () => {
    fc.assert(
      fc.property(finite, (x) => {
        const c = canonicalNumberText(x) as string;
        expect(Number(c)).toBe(x === 0 ? 0 : x);
        expect(c).not.toMatch(/e/i);
        expect(firstNonCanonicalNumber(`{"v": [${c}], "w": {"x": ${c}}}`)).toBeUndefined();
      }),
      { numRuns: 20_000 },
    );
  });

  it('any other spelling of the same value is found, with both texts', () => {
    fc.assert(
      fc.property(finite, fc.nat(6), (x, pick) => {
        const c = canonicalNumberText(x) as string;
        const spellings = otherSpellings(x, c);
        fc.pre(spellings.length > 0);
        const s = spellings[pick % spellings.length] as string;
        const text = `{"k": "${c}", "v": [1, ${s}]}`;
        expect(firstNonCanonicalNumber(text)).toEqual({ offset: text.lastIndexOf(s), found: s, expected: c });
      }),
      { numRuns: 20_000 },
    );
  });
});
