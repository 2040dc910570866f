/** Growable typed arrays for building CSR graphs and byte tables without per-item objects. */

/** A copy of `a` at least `min` long (doubling), keeping its contents. */
export function growU32(a: Uint32Array<ArrayBuffer>, min: number): Uint32Array<ArrayBuffer> {
  const b = new Uint32Array(Math.max(2 * a.length, min));
  b.set(a);
  return b;
}

/** A growing UTF-8 byte table (CSR), filled one string at a time. */
export class TableWriter {
  offsets: Uint32Array<ArrayBuffer> = new Uint32Array(1024);
  bytes = Buffer.allocUnsafe(64 * 1024);
  count = 0;

  /** Appends `s` as UTF-8. */
  add(s: string): void {
    const at = this.offsets[this.count] as number;
    if (at + 3 * s.length > this.bytes.length) {
      const bigger = Buffer.allocUnsafe(Math.max(2 * this.bytes.length, at + 3 * s.length));
      this.bytes.copy(bigger, 0, 0, at);
      this.bytes = bigger;
    }
    if (this.count + 2 > this.offsets.length) this.offsets = growU32(this.offsets, this.count + 2);
    this.offsets[++this.count] = at + this.bytes.write(s, at, 'utf8');
  }

  /** The table of everything added so far. */
  table(): { offsets: Uint32Array; bytes: Uint8Array } {
    return { offsets: this.offsets.subarray(0, this.count + 1), bytes: this.bytes.subarray(0, this.offsets[this.count]) };
  }
}
