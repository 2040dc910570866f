/** Growable typed arrays for building CSR graphs and byte tables without per-item objects. */

/** A copy of `a` at least `min` long (doubling), keeping its contents. */
export function growU32(a: Uint32Array<ArrayBuffer>, min: number): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(Math.max(2 * a.length, min));
  b.set(a);
  return b;
}

/**
 * A growing UTF-8 byte table (CSR). An entry is either added whole ({@link add}) or written
 * piece by piece at {@link pos} and closed with {@link end}.
 */
export class TableWriter {
  offsets: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  bytes = Buffer.allocUnsafe(64 * 1024);
  count = 0;
  /** Where the next byte of the open entry goes. */
  pos = 0;

  /** Makes room for `n` more bytes at {@link pos}. */
  reserve(n: number): void {
    if (this.pos + n <= this.bytes.length) return;
    const bigger = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, this.pos + n));
    this.bytes.copy(bigger, 0, 0, this.pos);
    this.bytes = bigger;
  }

  /** Appends one byte to the open entry. */
  byte(c: number): void {
    if (this.pos >= this.bytes.length) this.reserve(1);
    this.bytes[this.pos++] = c;
  }

  /** Appends `s` as UTF-8 to the open entry (short ASCII strings byte by byte, the rest by `Buffer.write`). */
  text(s: string): void {
    const n = s.length;
    this.reserve(3 * n);
    const b = this.bytes;
    let p = this.pos;
    if (n <= 64) {
      let i = 0;
      for (; i < n; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0x80) break;
        b[p++] = c;
      }
      if (i === n) {
        this.pos = p;
        return;
      }
      p = this.pos;
    }
    this.pos = p + b.write(s, p, 'utf8');
  }

  /** Appends `s`, known to be ASCII (a constant), to the open entry. */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const b = this.bytes;
    const p = this.pos;
    for (let i = 0; i < n; i++) b[p + i] = s.charCodeAt(i);
    this.pos = p + n;
  }

  /** Closes the open entry. */
  end(): void {
    if (this.count + 2 > this.offsets.length) this.offsets = growU32(this.offsets, this.count + 2);
    this.offsets[++this.count] = this.pos;
  }

  /** Appends `s` as one entry. */
  add(s: string): void {
    this.text(s);
    this.end();
  }

  /** Appends an empty entry. */
  addEmpty(): void {
    this.end();
  }

  /** Removes every entry (keeps the memory). */
  clear(): void {
    this.count = 0;
    this.pos = 0;
  }

  /** Removes the last closed entry. */
  pop(): void {
    this.pos = this.offsets[--this.count] as number;
  }

  /** The bytes of entry `i` (a view). */
  entry(i: number): Buffer {
    return this.bytes.subarray(this.offsets[i], this.offsets[i + 1]);
  }

  /** The table of every closed entry. */
  table(): { offsets: Uint32Array; bytes: Uint8Array } {
    return { offsets: this.offsets.subarray(0, this.count + 1), bytes: this.bytes.subarray(0, this.offsets[this.count]) };
  }
}
