/**
 * CSV cells: RFC 4180 quoting and OWASP formula neutralisation, checked by parsing the output with
 * a small independent RFC 4180 parser rather than by comparing strings.
 */
import { describe, expect, it } from 'vitest';
import { csvCell, csvRow } from '../../src/outputs/evidence/csv.js';
import { parseCsv } from '../helpers/csv.js';

const NASTY = [
  '=HYPERLINK("http://x")',
  '+1',
  '-2',
  '@x',
  '\tTAB',
  '\rCR',
  'say "hi"',
  'a,b',
  'line1\nline2',
  'crlf\r\ninside',
  'ünïcödé ✓ 日本語 🚀',
  '',
  'plain',
  "'already quoted",
];

describe('csv', () => {
  it('round-trips every value through an RFC 4180 parser, formula starters prefixed with one quote', () => {
    const text = csvRow(NASTY) + csvRow(['x', 'y']);
    const parsed = parseCsv(text);
    expect(parsed).toHaveLength(2);
    expect(parsed[0]).toEqual(NASTY.map((v) => (/^[=+\-@\t\r]/.test(v) ? `'${v}` : v)));
    expect(parsed[1]).toEqual(['x', 'y']);
  });

  it('never starts a cell with a formula character', () => {
    for (const cell of parseCsv(csvRow(NASTY))[0] ?? []) expect(cell).not.toMatch(/^[=+\-@\t\r]/);
  });

  it('quotes only cells with a quote, comma, CR or LF, and ends records with CRLF', () => {
    expect(csvCell('plain')).toBe('plain');
    expect(csvCell('a,b')).toBe('"a,b"');
    expect(csvCell('say "hi"')).toBe('"say ""hi"""');
    expect(csvCell('-2')).toBe("'-2");
    expect(csvCell('=1,2')).toBe(`"'=1,2"`);
    expect(csvRow(['a', 'b'])).toBe('a,b\r\n');
  });
});
