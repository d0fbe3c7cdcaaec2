/**
 * A YAML parse error as one line that never quotes the file: the parser's own message carries the
 * neighbouring lines, and those may hold a sink password or a token. Only the position (line and
 * column) and the reason are kept. Pure.
 */
import { YAMLError } from 'yaml';

/** Line and column (1-based) of a character offset in `text`. */
function positionOf(text: string, offset: number): { line: number; col: number } {
  let line = 1;
  let lineStart = 0;
  const end = Math.min(Math.max(offset, 0), text.length);
  for (let i = 0; i < end; i++) {
    if (text.charCodeAt(i) === 10) {
      line++;
      lineStart = i + 1;
    }
  }
  return { line, col: end - lineStart + 1 };
}

/**
 * `<reason> at line L, column C` for an error of `yaml`'s parse, without any excerpt of `text`.
 * Parse with `prettyErrors: false` so that the message holds the reason only; its first line is
 * kept in any case.
 */
export function describeYamlError(err: unknown, text: string): string {
  if (!(err instanceof YAMLError)) return 'the YAML parser failed';
  const reason = (err.message.split('\n')[0] ?? '').replace(/ at line \d+, column \d+:?$/, '').trim();
  const { line, col } = err.linePos?.[0] ?? positionOf(text, err.pos[0]);
  return `${reason || err.code} at line ${line}, column ${col}`;
}
