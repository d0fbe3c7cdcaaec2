/**
 * A JSON file of the pack whose long list is streamed: written as `JSON.stringify(value, null, 2)`
 * would write it, except that a {@link StreamedList} inside it is written member by member, each
 * member compact on a line of its own, as its items come (so a list of any length holds one member
 * in memory).
 */
import type { PackFileWriter } from './writer.js';

/** A list written one member a line as it is produced; `count` is how many were, once written. */
export class StreamedList {
  count = 0;
  constructor(readonly items: AsyncIterable<unknown>) {}
}

/**
 * Writes `value` and a final line feed. A StreamedList may stand as the value of any key of a plain
 * object (at any depth of plain objects), not inside an array.
 */
export async function writeJson(file: PackFileWriter, value: unknown): Promise<void> {
  await writeValue(file, value, '');
  await file.write('\n');
}

async function writeValue(file: PackFileWriter, value: unknown, indent: string): Promise<void> {
  if (value instanceof StreamedList) return writeList(file, value, indent);
  if (!holdsList(value)) {
    await file.write(JSON.stringify(value, null, 2).replaceAll('\n', `\n${indent}`));
    return;
  }
  // Left out as JSON.stringify leaves them out.
  const fields = Object.entries(value as object).filter(
    ([, v]) => v !== undefined && typeof v !== 'function' && typeof v !== 'symbol',
  );
  await file.write('{');
  for (const [i, [key, v]] of fields.entries()) {
    await file.write(`${i === 0 ? '' : ','}\n${indent}  ${JSON.stringify(key)}: `);
    await writeValue(file, v, `${indent}  `);
  }
  await file.write(`\n${indent}}`);
}

async function writeList(file: PackFileWriter, list: StreamedList, indent: string): Promise<void> {
  let n = 0;
  await file.write('[');
  for await (const item of list.items) {
    await file.write(`${n === 0 ? '' : ','}\n${indent}  ${JSON.stringify(item)}`);
    n++;
  }
  list.count = n;
  await file.write(`${n === 0 ? '' : `\n${indent}`}]`);
}

/** Whether a plain object holds a StreamedList (itself, or in a plain object below it). */
function holdsList(value: unknown): boolean {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  return Object.values(value).some((v) => v instanceof StreamedList || holdsList(v));
}
