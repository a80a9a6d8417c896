/**
 * A guard in front of the SDK's stdio transport. The SDK keeps at most 10 MiB of unread input and,
 * past that, closes the transport: one oversized request ended the whole session, silently. Here
 * each message (one line) is passed on whole, and a line longer than {@link REQUEST_BYTES} is
 * dropped as it streams (never buffered whole) and answered with a JSON-RPC error naming the size
 * and the limit, when its id can be read from its ends; the session goes on.
 */
import { Transform, type TransformCallback } from "node:stream";

/** The largest request line passed on, in bytes: under the SDK's 10 MiB buffer. */
export const REQUEST_BYTES = 8 * 1024 * 1024;

/** Bytes kept of each end of a dropped line, to find its id. */
const EDGE = 4096;

const ID = String.raw`(-?\d+|"(?:[^"\\]|\\.){0,256}")`;
/** The envelope's id when it comes first (`{"jsonrpc":"2.0","id":7,…` or `{"id":7,…`)… */
const LEADING_ID = new RegExp(String.raw`^\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*${ID}`);
/** …or last (`…,"jsonrpc":"2.0","id":7}`, as the SDK's client writes it). */
const TRAILING_ID = new RegExp(String.raw`"id"\s*:\s*${ID}\s*\}\s*$`);

/**
 * The JSON-RPC id of a line too long to parse, read from its ends only where it can only be the
 * envelope's (an `"id"` inside the params is never taken); undefined when neither end says.
 */
function envelopeId(head: string, tail: string): string | number | undefined {
  const m = LEADING_ID.exec(head) ?? TRAILING_ID.exec(tail.replace(/\r$/, ""));
  if (m === null) return undefined;
  return m[1]!.startsWith('"') ? (JSON.parse(m[1]!) as string) : Number(m[1]);
}

/** What {@link LineLimiter} reports of a dropped line. */
export interface OversizedRequest {
  /** The JSON-RPC id read from the line's ends, when they say. */
  readonly id: string | number | undefined;
  /** The line's length in bytes (without the newline). */
  readonly bytes: number;
}

/** Splits input into lines; passes lines up to `limit` bytes on, reports longer ones (see above). */
export class LineLimiter extends Transform {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** While dropping an oversized line: its first and last bytes (for the id), its length so far. */
  private dropping: { head: Buffer; tail: Buffer; bytes: number } | undefined;

  /**
   * @param keep asked of each line that is not too long; false drops it (the caller answered it:
   *   a line that is no JSON-RPC message).
   */
  constructor(
    private readonly onOversized: (r: OversizedRequest) => void,
    private readonly limit = REQUEST_BYTES,
    private readonly keep: (line: Buffer) => boolean = () => true,
  ) {
    super();
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let at = 0;
    while (at < chunk.length) {
      const nl = chunk.indexOf(10, at);
      const end = nl === -1 ? chunk.length : nl;
      this.add(chunk.subarray(at, end));
      if (nl === -1) break;
      this.endLine();
      at = nl + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.dropping !== undefined || this.pendingBytes > 0) this.endLine(false);
    done();
  }

  private add(part: Buffer): void {
    if (part.length === 0) return;
    if (this.dropping !== undefined) {
      this.dropping.bytes += part.length;
      this.dropping.tail = Buffer.from(Buffer.concat([this.dropping.tail, part]).subarray(-EDGE));
      return;
    }
    if (this.pendingBytes + part.length > this.limit) {
      const all = Buffer.concat([...this.pending, part]);
      this.dropping = {
        head: Buffer.from(all.subarray(0, EDGE)),
        tail: Buffer.from(all.subarray(-EDGE)),
        bytes: this.pendingBytes + part.length,
      };
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }

  private endLine(newline = true): void {
    if (this.dropping !== undefined) {
      const { head, tail, bytes } = this.dropping;
      this.dropping = undefined;
      this.onOversized({ id: envelopeId(head.toString("utf8"), tail.toString("utf8")), bytes });
      return;
    }
    const line = Buffer.concat(this.pending);
    this.pending = [];
    this.pendingBytes = 0;
    if (!this.keep(line)) return;
    this.push(newline ? Buffer.concat([line, Buffer.from("\n")]) : line);
  }
}
