/**
 * Automerge's chunk framing, read once for the whole package: a stored file or a sync message's
 * change entry is a sequence of chunks, each `magic (4) · checksum (4) · type (1) · LEB128 length ·
 * data`. The storage's damage check (chunk-check.ts) and the sync server's change validator
 * (change-check.ts) both walk it.
 *
 * Why by hand: Automerge's API has no call that splits concatenated chunks without applying them.
 * `loadIncremental` applies what it can and keeps a change whose dependencies are missing in a
 * queue no API shows, so a validator that must judge every change a peer sent (even one that
 * arrives before its parents) and a damage check that must say which byte is bad cannot use it;
 * `readBundle` reads only the experimental bundle chunk. The framing is Automerge's binary format
 * (https://automerge.org/automerge-binary-format-spec), stable since Automerge 2.
 */

/** The four bytes every Automerge chunk starts with. */
export const CHUNK_MAGIC = [0x85, 0x6f, 0x4a, 0x83] as const;

/** One chunk's place in a byte array: its type, where its checksummed part starts, where it ends. */
export interface ChunkFrame {
  /** 0 document, 1 change, 2 compressed change (others are not written by automerge-repo). */
  readonly type: number;
  /** The chunk's first byte (its magic). */
  readonly start: number;
  /** One past its last byte: where the next chunk starts. */
  readonly end: number;
}

/**
 * The frame of the chunk at byte `at` of `data`, or what is wrong with its header (bad magic, cut
 * short, an impossible length); the data itself is not checked here.
 */
export function chunkFrameAt(data: Uint8Array, at: number): ChunkFrame | string {
  for (let i = 0; i < CHUNK_MAGIC.length; i++) {
    if (at + i >= data.length) return `truncated at byte ${at + i} (inside a chunk header)`;
    if (data[at + i] !== CHUNK_MAGIC[i]) return `not an Automerge chunk at byte ${at} (bad magic bytes)`;
  }
  if (at + 9 > data.length) return `truncated at byte ${data.length} (inside a chunk header)`;
  const type = data[at + 8]!;
  let i = at + 9;
  let length = 0;
  for (let shift = 0; ; shift += 7) {
    if (i >= data.length) return `truncated at byte ${data.length} (inside a chunk header)`;
    if (shift > 49) return `bad chunk length at byte ${at + 9}`;
    const b = data[i++]!;
    length += (b & 0x7f) * 2 ** shift;
    if ((b & 0x80) === 0) break;
  }
  const end = i + length;
  if (end > data.length) {
    return `truncated: the chunk at byte ${at} needs ${end - at} bytes, the file has ${data.length - at}`;
  }
  return { type, start: at, end };
}
