/**
 * number-text.ts: the text govtrail stores for each number (JSON.stringify's, exponent forms as
 * jsonb writes them), and the scan over stored raw that finds a number in any other spelling.
 */
import { describe, expect, it } from 'vitest';
import {
  canonicalNumberText,
  firstNonCanonicalNumber,
  jsonPathAt,
} from '../../src/core/normalise/number-text.js';

describe('canonicalNumberText', () => {
  it.each([
    [4, '4'],
    [-0, '0'],
    [0.1, '0.1'],
    [-1.5, '-1.5'],
    [1e21, '1000000000000000000000'],
    [-1.5e21, '-1500000000000000000000'],
    [1e-7, '0.0000001'],
    [1.5e-7, '0.00000015'],
    [-1.2345e-10, '-0.00000000012345'],
    [0.000001, '0.000001'],
    [1e20, '100000000000000000000'],
    [2 ** 60, '1152921504606847000'],
    [2 ** 53 + 2, '9007199254740994'],
    [5e-324, `0.${'0'.repeat(323)}5`],
    [1.7976931348623157e308, `17976931348623157${'0'.repeat(292)}`],
  ])('%s is stored as %s', (x, text) => {
    expect(canonicalNumberText(x)).toBe(text);
  });

  it('has no text for a number govtrail writes as null', () => {
    expect(canonicalNumberText(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(canonicalNumberText(Number.NaN)).toBeUndefined();
  });
});

describe('firstNonCanonicalNumber', () => {
  it('accepts raw as govtrail stores it', () => {
    expect(
      firstNonCanonicalNumber(
        '{"a": 4, "b": [-1.5, 0, 0.0000001, 1000000000000000000000], "c": {"d": 9007199254740992}}',
      ),
    ).toBeUndefined();
    expect(firstNonCanonicalNumber('[]')).toBeUndefined();
    expect(firstNonCanonicalNumber('"4.0"')).toBeUndefined();
  });

  it.each([
    ['4.0000000000000001', '4'],
    ['4.0', '4'],
    ['-0', '0'],
    ['-0.0', '0'],
    ['0.10', '0.1'],
    ['1e+21', '1000000000000000000000'],
    ['1152921504606846976', '1152921504606847000'],
    ['9007199254740993', '9007199254740992'],
    ['1' + '0'.repeat(400), undefined],
  ])('finds %s (govtrail writes %s)', (found, expected) => {
    const text = `{"metadata": {"n": [1, ${found}]}, "z": 2}`;
    const m = firstNonCanonicalNumber(text);
    expect(m).toEqual({ offset: text.indexOf(found, 20), found, expected });
    expect(jsonPathAt(text, m?.offset ?? 0)).toBe('$.metadata.n[1]');
  });

  it('skips numbers inside strings, escaped quotes and backslashes included', () => {
    expect(firstNonCanonicalNumber('{"4.0": "a\\" 4.0 \\"", "b\\\\": "\\\\", "c": ["1.0"]}')).toBeUndefined();
    const text = '{"a\\"": "x\\\\", "k": 4.50}';
    expect(firstNonCanonicalNumber(text)).toMatchObject({ found: '4.50', expected: '4.5' });
  });

  it('names the path of keys that are not plain names', () => {
    const text = '{"a b": [{"x": 1}, {"\\u00e9": 2.0}]}';
    const m = firstNonCanonicalNumber(text);
    expect(m?.found).toBe('2.0');
    expect(jsonPathAt(text, m?.offset ?? 0)).toBe('$["a b"][1]["é"]');
  });
});
