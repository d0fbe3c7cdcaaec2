/** Plain-text tables for terminal output. */
import { terminalLine } from '../runtime/terminal.js';

/**
 * Left-aligned columns separated by two spaces; cells are single-line, and every control character
 * a cell holds (source text: ESC, C1, bidi overrides) is shown as a visible escape (src/runtime/terminal.ts).
 */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const clean = (s: string) => terminalLine(s.replace(/[\r\n\t]+/g, ' '));
  const all = [headers.map(clean), ...rows.map((r) => r.map(clean))];
  const widths = headers.map((_, i) => Math.max(...all.map((r) => (r[i] ?? '').length)));
  return all
    .map((r) =>
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
