const encoder = new TextEncoder();

/**
 * A growing byte buffer that text is written into as UTF-8, exactly as `TextEncoder` encodes it.
 * The canonical form is written with one of these instead of being built as a string and encoded
 * afterwards: it is hashed straight from the buffer, and the buffer is reused from one definition
 * to the next, so hashing a program allocates next to nothing per node.
 */
export class ByteWriter {
  private buf = new Uint8Array(4096);
  /** How many bytes are written. */
  length = 0;

  /** Forgets what was written, keeping the memory. */
  reset(): void {
    this.length = 0;
  }

  /** The bytes written so far: a view that the next write or reset may overwrite. */
  view(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }

  /** Room for `n` more bytes. */
  private reserve(n: number): void {
    const need = this.length + n;
    if (need <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < need) size *= 2;
    const grown = new Uint8Array(size);
    grown.set(this.buf.subarray(0, this.length));
    this.buf = grown;
  }

  /** One byte (an ASCII character code). */
  byte(b: number): void {
    if (this.length === this.buf.length) this.reserve(1);
    this.buf[this.length++] = b;
  }

  bytes(b: Uint8Array): void {
    this.reserve(b.length);
    this.buf.set(b, this.length);
    this.length += b.length;
  }

  /** `s` as UTF-8. */
  text(s: string): void {
    const n = s.length;
    this.reserve(n);
    const buf = this.buf;
    let at = this.length;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) {
        this.length = at;
        this.encode(s.slice(i));
        return;
      }
      buf[at++] = c;
    }
    this.length = at;
  }

  /** `JSON.stringify(s)` as UTF-8, without building the quoted string when nothing needs escaping. */
  jsonString(s: string): void {
    const n = s.length;
    this.reserve(n + 2);
    const buf = this.buf;
    const start = this.length;
    let at = start;
    buf[at++] = 0x22;
    for (let i = 0; i < n; i++) {
      const c = s.charCodeAt(i);
      // Control characters, `"`, `\` and everything beyond ASCII take JSON.stringify's own path.
      if (c < 0x20 || c >= 0x7f || c === 0x22 || c === 0x5c) {
        this.length = start;
        this.text(JSON.stringify(s));
        return;
      }
      buf[at++] = c;
    }
    buf[at++] = 0x22;
    this.length = at;
  }

  /** The slow path of {@link text}: whatever `TextEncoder` makes of `s` (lone surrogates included). */
  private encode(s: string): void {
    // UTF-8 takes at most three bytes per UTF-16 code unit.
    this.reserve(s.length * 3);
    const { written } = encoder.encodeInto(s, this.buf.subarray(this.length));
    this.length += written;
  }
}
