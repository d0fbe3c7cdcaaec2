/**
 * The one place text from the source is made safe for a terminal. Entry values, actor ids, tenant
 * answers and receiver answers can hold control characters: ESC starts an escape sequence (colours,
 * cursor moves, a window title, a hyperlink), CR rewrites the line, C1 controls are escape
 * sequences on some terminals, and the bidi overrides reorder what the analyst reads. Each becomes
 * a visible escape (`\x1b`, `\u202e`) instead. Pure.
 */

/**
 * Characters a terminal acts on instead of showing: C0 controls but tab and line feed, DEL, C1
 * controls, the bidi embeddings, overrides, isolates and marks, and the Unicode line and paragraph
 * separators.
 */
const UNSAFE =
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** Also tab and line feed: a table cell or a one-line message keeps to one line. */
const UNSAFE_IN_LINE =
  /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g;

/** `\x1b` for a control character below U+0100, `\u202e` for the others. */
function visible(c: string): string {
  const code = c.charCodeAt(0);
  return code < 0x100
    ? `\\x${code.toString(16).padStart(2, '0')}`
    : `\\u${code.toString(16).padStart(4, '0')}`;
}

/** Text for a terminal, line feeds and tabs kept (a message of several lines). */
export function terminalText(text: string): string {
  return text.replace(UNSAFE, visible);
}

/** Text for one line or one table cell: every control character escaped, line feeds and tabs too. */
export function terminalLine(text: string): string {
  return text.replace(UNSAFE_IN_LINE, visible);
}

/**
 * JSON text for a terminal, still valid JSON of the same value: JSON.stringify already escapes C0
 * controls, so only DEL, C1 controls, bidi controls and the separators are left, and each becomes
 * its `\uXXXX` escape (which appear only inside strings).
 */
export function terminalJson(json: string): string {
  return json.replace(UNSAFE, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
