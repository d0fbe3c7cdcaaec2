/**
 * One file of the pack written as a stream: every chunk is hashed as it is written and the file's
 * backpressure is honoured, so a period of any size holds one chunk in memory, never the file.
 */
import { createHash, type Hash } from 'node:crypto';
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import path from 'node:path';
import { csvRow } from '../evidence/csv.js';

/** What the manifest records of a written file. */
export interface WrittenFile {
  readonly name: string;
  readonly sha256: string;
  readonly bytes: number;
  /** Data rows of a CSV, records of a JSON file; null for free text. */
  readonly rows: number | null;
}

export class PackFileWriter {
  readonly name: string;
  readonly #file: WriteStream;
  readonly #hash: Hash = createHash('sha256');
  readonly #failed: Promise<never>;
  #bytes = 0;

  constructor(dir: string, name: string) {
    this.name = name;
    this.#file = createWriteStream(path.join(dir, name), { flags: 'wx' });
    this.#failed = new Promise<never>((_, reject) => this.#file.once('error', reject));
    this.#failed.catch(() => {});
  }

  /** Writes text (UTF-8), waiting for the disk when its buffer is full. */
  async write(text: string | Buffer): Promise<void> {
    const chunk = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
    this.#hash.update(chunk);
    this.#bytes += chunk.length;
    if (!this.#file.write(chunk)) await Promise.race([once(this.#file, 'drain'), this.#failed]);
  }

  /** Appends another file's content, streamed. */
  async append(file: string): Promise<void> {
    for await (const chunk of createReadStream(file)) await this.write(chunk as Buffer);
  }

  async close(rows: number | null): Promise<WrittenFile> {
    this.#file.end();
    await Promise.race([once(this.#file, 'finish'), this.#failed]);
    return { name: this.name, sha256: this.#hash.digest('hex'), bytes: this.#bytes, rows };
  }

  /** Stops writing after a failure; the file is left to the caller's clean-up. */
  destroy(): void {
    this.#file.destroy();
  }
}

/** A CSV file of the pack: header first, then formula-safe rows (src/outputs/evidence/csv.ts), counted. */
export class PackCsvWriter {
  readonly #file: PackFileWriter;
  #rows = 0;

  private constructor(file: PackFileWriter) {
    this.#file = file;
  }

  static async open(dir: string, name: string, header: readonly string[]): Promise<PackCsvWriter> {
    const file = new PackFileWriter(dir, name);
    try {
      await file.write(csvRow(header));
    } catch (err) {
      file.destroy();
      throw err;
    }
    return new PackCsvWriter(file);
  }

  async row(cells: readonly string[]): Promise<void> {
    await this.#file.write(csvRow(cells));
    this.#rows++;
  }

  /** Appends rows already encoded (by csvRow) in another file, streamed. */
  async appendRows(file: string, rows: number): Promise<void> {
    await this.#file.append(file);
    this.#rows += rows;
  }

  get rows(): number {
    return this.#rows;
  }

  close(): Promise<WrittenFile> {
    return this.#file.close(this.#rows);
  }

  destroy(): void {
    this.#file.destroy();
  }
}

/** Writes a whole small file at once (README.txt, SHA256SUMS, report.html, the settings JSON). */
export async function writeWholeFile(
  dir: string,
  name: string,
  content: string | Buffer,
  rows: number | null,
): Promise<WrittenFile> {
  const file = new PackFileWriter(dir, name);
  try {
    await file.write(content);
    return await file.close(rows);
  } catch (err) {
    file.destroy();
    throw err;
  }
}

/** sha256 of a file, streamed. */
export async function sha256File(file: string): Promise<{ sha256: string; bytes: number }> {
  const hash = createHash('sha256');
  let bytes = 0;
  for await (const chunk of createReadStream(file)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

/** Cells: text as is, anything else as JSON, empty for null. */
export function cellValue(v: unknown): string {
  if (v === null || v === undefined) return '';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** A timestamp cell: ISO 8601 UTC, empty for null. */
export function cellTime(d: Date | null | undefined): string {
  return d === null || d === undefined ? '' : d.toISOString();
}
