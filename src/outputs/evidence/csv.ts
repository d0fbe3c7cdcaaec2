/**
 * RFC 4180 CSV, hardened against formula injection. Pure.
 *
 * Spreadsheet programs execute a cell that begins with `=`, `+`, `-` or `@` (and some also after a
 * leading tab or carriage return), so an attacker who controls an annotation could plant
 * `=HYPERLINK(…)` in an auditor's export. OWASP's advice: prefix such a cell with `'`, which the
 * spreadsheet shows as text. The prefix changes the value, so the evidence is still exact in the
 * database; the CSV is a human-facing copy.
 */

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** One cell: neutralised, then quoted when it holds a quote, comma, CR or LF. */
export function csvCell(value: string): string {
  const safe = FORMULA_START.test(value) ? `'${value}` : value;
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll('"', '""')}"` : safe;
}

/** One record with its CRLF line end. */
export function csvRow(cells: readonly string[]): string {
  return `${cells.map(csvCell).join(',')}\r\n`;
}
