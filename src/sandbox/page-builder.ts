/**
 * Assembles a page as UTF-8 bytes, entry by entry. Joining the entries first would build one
 * large rope that a single non-Latin-1 character turns two-byte; flattening and encoding it
 * (once for the length, once for the write) dominated the cost of a page.
 */
export class PageBuilder {
  private buffer: Buffer;
  private length = 0;

  constructor(entries: number) {
    this.buffer = Buffer.allocUnsafe(Math.max(4096, entries * 1536));
  }

  write(text: string): void {
    // UTF-8 never takes more than three bytes per UTF-16 code unit.
    const needed = this.length + text.length * 3;
    if (needed > this.buffer.length) {
      const bigger = Buffer.allocUnsafe(Math.max(needed, this.buffer.length * 2));
      this.buffer.copy(bigger, 0, 0, this.length);
      this.buffer = bigger;
    }
    this.length += this.buffer.write(text, this.length, 'utf8');
  }

  bytes(): Buffer {
    return this.buffer.subarray(0, this.length);
  }
}
