/** Test helper: an RFC 4180 parser independent of the code under test. */

/** A strict RFC 4180 parser: CRLF record ends, quoted fields with doubled quotes. */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let i = 0;
  while (i < text.length) {
    let cell = '';
    if (text[i] === '"') {
      i++;
      for (;;) {
        if (i >= text.length) throw new Error('unterminated quoted field');
        if (text[i] === '"') {
          if (text[i + 1] === '"') {
            cell += '"';
            i += 2;
            continue;
          }
          i++;
          break;
        }
        cell += text[i];
        i++;
      }
    } else {
      while (i < text.length && text[i] !== ',' && text[i] !== '\r' && text[i] !== '\n') {
        if (text[i] === '"') throw new Error(`bare quote at ${i}`);
        cell += text[i];
        i++;
      }
    }
    record.push(cell);
    if (text[i] === ',') {
      i++;
      continue;
    }
    if (text.startsWith('\r\n', i)) {
      records.push(record);
      record = [];
      i += 2;
      continue;
    }
    throw new Error(`expected , or CRLF at ${i}`);
  }
  if (record.length > 0) throw new Error('last record lacks CRLF');
  return records;
}
