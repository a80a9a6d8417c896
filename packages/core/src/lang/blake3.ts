/**
 * BLAKE3 (unkeyed, 32-byte output) of a byte string held in memory, as lower-case hex. The same
 * function as `@noble/hashes`' `blake3` — a test holds them equal on the official vectors and on
 * random inputs — written for what content hashing does: many inputs of a few hundred bytes to a
 * few kilobytes, hashed in a loop. It allocates nothing per block (noble's allocates a result
 * object of sixteen numbers per compression, which made hashing a program garbage-collector bound).
 */
export function blake3Hex(input: Uint8Array): string {
  const len = input.length;
  const chunks = Math.max(1, Math.ceil(len / CHUNK_LEN));
  let depth = 0;
  for (let c = 0; c < chunks; c++) {
    const start = c * CHUNK_LEN;
    const end = Math.min(len, start + CHUNK_LEN);
    const isOnlyChunk = chunks === 1;
    chunkChainingValue(input, start, end, c, isOnlyChunk);
    if (isOnlyChunk) break;
    if (c < chunks - 1) {
      // Merge completed subtrees: after chunk c, as many parents as c+1 has trailing zero bits.
      for (let total = c + 1; (total & 1) === 0; total >>>= 1) {
        depth--;
        parentChainingValue(depth, false);
      }
      stack.set(cv, depth * 8);
      depth++;
    } else {
      // The last chunk: fold the stack from the top, the last fold being the root.
      while (depth > 0) {
        depth--;
        parentChainingValue(depth, depth === 0);
      }
    }
  }
  return toHex(cv);
}

const utf8 = new TextEncoder();

/** {@link blake3Hex} of a string's UTF-8 bytes: the one BLAKE3 core hashes text with. */
export function blake3HexOfText(text: string): string {
  return blake3Hex(utf8.encode(text));
}

const CHUNK_LEN = 1024;
const BLOCK_LEN = 64;
const CHUNK_START = 1;
const CHUNK_END = 2;
const PARENT = 4;
const ROOT = 8;

const IV = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19,
]);

/** The message word order of each of the seven rounds: the identity permuted once per round. */
const SCHEDULE: Uint8Array = (() => {
  const permutation = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
  const out = new Uint8Array(7 * 16);
  let order = Array.from({ length: 16 }, (_, i) => i);
  for (let r = 0; r < 7; r++) {
    out.set(order, r * 16);
    order = permutation.map((p) => order[p]!);
  }
  return out;
})();

// Working memory, reused by every call (hashing is synchronous, so calls never interleave).
/** The current chaining value. */
const cv = new Int32Array(8);
/** The block being compressed, as sixteen little-endian words. */
const block = new Int32Array(16);
/** Chaining values of completed subtrees: a 2^54-byte input needs no more than 54 levels. */
const stack = new Int32Array(54 * 8);

/** Sets `cv` to the chaining value of the chunk `input[start, end)`, the `counter`-th chunk. */
function chunkChainingValue(
  input: Uint8Array,
  start: number,
  end: number,
  counter: number,
  isRoot: boolean,
): void {
  cv.set(IV);
  const blocks = Math.max(1, Math.ceil((end - start) / BLOCK_LEN));
  for (let b = 0; b < blocks; b++) {
    const at = start + b * BLOCK_LEN;
    const blockLen = Math.min(BLOCK_LEN, end - at);
    loadBlock(input, at, blockLen);
    let flags = 0;
    if (b === 0) flags |= CHUNK_START;
    if (b === blocks - 1) flags |= CHUNK_END | (isRoot ? ROOT : 0);
    compress(counter, blockLen, flags);
  }
}

/** Sets `cv` to the parent of the subtree at `stack[level]` (left) and `cv` (right). */
function parentChainingValue(level: number, isRoot: boolean): void {
  block.set(stack.subarray(level * 8, level * 8 + 8), 0);
  block.set(cv, 8);
  cv.set(IV);
  compress(0, BLOCK_LEN, PARENT | (isRoot ? ROOT : 0));
}

/** Reads `len` ≤ 64 bytes at `at` into `block`, zero-padded, little-endian. */
function loadBlock(input: Uint8Array, at: number, len: number): void {
  if (len === BLOCK_LEN) {
    for (let w = 0, i = at; w < 16; w++, i += 4) {
      block[w] = input[i]! | (input[i + 1]! << 8) | (input[i + 2]! << 16) | (input[i + 3]! << 24);
    }
    return;
  }
  block.fill(0);
  for (let i = 0; i < len; i++) block[i >> 2]! |= input[at + i]! << ((i & 3) * 8);
}

/**
 * The compression function, keeping the first half of its output: `cv` becomes the new chaining
 * value. The state lives in sixteen locals and the mixing function G is written out for each of
 * its eight applications per round (columns, then diagonals): kept in registers, not in an array.
 */
function compress(counter: number, blockLen: number, flags: number): void {
  let v0 = cv[0]!;
  let v1 = cv[1]!;
  let v2 = cv[2]!;
  let v3 = cv[3]!;
  let v4 = cv[4]!;
  let v5 = cv[5]!;
  let v6 = cv[6]!;
  let v7 = cv[7]!;
  let v8 = IV[0]!;
  let v9 = IV[1]!;
  let v10 = IV[2]!;
  let v11 = IV[3]!;
  let v12 = counter | 0;
  let v13 = Math.floor(counter / 2 ** 32) | 0;
  let v14 = blockLen;
  let v15 = flags;
  const s = SCHEDULE;
  for (let r = 0; r < 7 * 16; r += 16) {
    // G(0, 4, 8, 12)
    v0 = (v0 + v4 + block[s[r + 0]!]!) | 0;
    v12 ^= v0;
    v12 = (v12 >>> 16) | (v12 << 16);
    v8 = (v8 + v12) | 0;
    v4 ^= v8;
    v4 = (v4 >>> 12) | (v4 << 20);
    v0 = (v0 + v4 + block[s[r + 1]!]!) | 0;
    v12 ^= v0;
    v12 = (v12 >>> 8) | (v12 << 24);
    v8 = (v8 + v12) | 0;
    v4 ^= v8;
    v4 = (v4 >>> 7) | (v4 << 25);
    // G(1, 5, 9, 13)
    v1 = (v1 + v5 + block[s[r + 2]!]!) | 0;
    v13 ^= v1;
    v13 = (v13 >>> 16) | (v13 << 16);
    v9 = (v9 + v13) | 0;
    v5 ^= v9;
    v5 = (v5 >>> 12) | (v5 << 20);
    v1 = (v1 + v5 + block[s[r + 3]!]!) | 0;
    v13 ^= v1;
    v13 = (v13 >>> 8) | (v13 << 24);
    v9 = (v9 + v13) | 0;
    v5 ^= v9;
    v5 = (v5 >>> 7) | (v5 << 25);
    // G(2, 6, 10, 14)
    v2 = (v2 + v6 + block[s[r + 4]!]!) | 0;
    v14 ^= v2;
    v14 = (v14 >>> 16) | (v14 << 16);
    v10 = (v10 + v14) | 0;
    v6 ^= v10;
    v6 = (v6 >>> 12) | (v6 << 20);
    v2 = (v2 + v6 + block[s[r + 5]!]!) | 0;
    v14 ^= v2;
    v14 = (v14 >>> 8) | (v14 << 24);
    v10 = (v10 + v14) | 0;
    v6 ^= v10;
    v6 = (v6 >>> 7) | (v6 << 25);
    // G(3, 7, 11, 15)
    v3 = (v3 + v7 + block[s[r + 6]!]!) | 0;
    v15 ^= v3;
    v15 = (v15 >>> 16) | (v15 << 16);
    v11 = (v11 + v15) | 0;
    v7 ^= v11;
    v7 = (v7 >>> 12) | (v7 << 20);
    v3 = (v3 + v7 + block[s[r + 7]!]!) | 0;
    v15 ^= v3;
    v15 = (v15 >>> 8) | (v15 << 24);
    v11 = (v11 + v15) | 0;
    v7 ^= v11;
    v7 = (v7 >>> 7) | (v7 << 25);
    // G(0, 5, 10, 15)
    v0 = (v0 + v5 + block[s[r + 8]!]!) | 0;
    v15 ^= v0;
    v15 = (v15 >>> 16) | (v15 << 16);
    v10 = (v10 + v15) | 0;
    v5 ^= v10;
    v5 = (v5 >>> 12) | (v5 << 20);
    v0 = (v0 + v5 + block[s[r + 9]!]!) | 0;
    v15 ^= v0;
    v15 = (v15 >>> 8) | (v15 << 24);
    v10 = (v10 + v15) | 0;
    v5 ^= v10;
    v5 = (v5 >>> 7) | (v5 << 25);
    // G(1, 6, 11, 12)
    v1 = (v1 + v6 + block[s[r + 10]!]!) | 0;
    v12 ^= v1;
    v12 = (v12 >>> 16) | (v12 << 16);
    v11 = (v11 + v12) | 0;
    v6 ^= v11;
    v6 = (v6 >>> 12) | (v6 << 20);
    v1 = (v1 + v6 + block[s[r + 11]!]!) | 0;
    v12 ^= v1;
    v12 = (v12 >>> 8) | (v12 << 24);
    v11 = (v11 + v12) | 0;
    v6 ^= v11;
    v6 = (v6 >>> 7) | (v6 << 25);
    // G(2, 7, 8, 13)
    v2 = (v2 + v7 + block[s[r + 12]!]!) | 0;
    v13 ^= v2;
    v13 = (v13 >>> 16) | (v13 << 16);
    v8 = (v8 + v13) | 0;
    v7 ^= v8;
    v7 = (v7 >>> 12) | (v7 << 20);
    v2 = (v2 + v7 + block[s[r + 13]!]!) | 0;
    v13 ^= v2;
    v13 = (v13 >>> 8) | (v13 << 24);
    v8 = (v8 + v13) | 0;
    v7 ^= v8;
    v7 = (v7 >>> 7) | (v7 << 25);
    // G(3, 4, 9, 14)
    v3 = (v3 + v4 + block[s[r + 14]!]!) | 0;
    v14 ^= v3;
    v14 = (v14 >>> 16) | (v14 << 16);
    v9 = (v9 + v14) | 0;
    v4 ^= v9;
    v4 = (v4 >>> 12) | (v4 << 20);
    v3 = (v3 + v4 + block[s[r + 15]!]!) | 0;
    v14 ^= v3;
    v14 = (v14 >>> 8) | (v14 << 24);
    v9 = (v9 + v14) | 0;
    v4 ^= v9;
    v4 = (v4 >>> 7) | (v4 << 25);
  }
  cv[0] = v0 ^ v8;
  cv[1] = v1 ^ v9;
  cv[2] = v2 ^ v10;
  cv[3] = v3 ^ v11;
  cv[4] = v4 ^ v12;
  cv[5] = v5 ^ v13;
  cv[6] = v6 ^ v14;
  cv[7] = v7 ^ v15;
}

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));

/** The eight words as their 32 little-endian bytes, in hex. */
function toHex(words: Int32Array): string {
  let out = "";
  for (let i = 0; i < 8; i++) {
    const w = words[i]!;
    out += HEX[w & 0xff]! + HEX[(w >>> 8) & 0xff]! + HEX[(w >>> 16) & 0xff]! + HEX[w >>> 24]!;
  }
  return out;
}
