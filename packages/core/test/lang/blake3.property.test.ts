import { blake3 } from "@noble/hashes/blake3.js";
import { bytesToHex } from "@noble/hashes/utils.js";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { blake3Hex } from "../../src/lang/blake3.js";

/** The official test vectors' input: bytes 0, 1, …, 250, 0, 1, … */
function vectorInput(length: number): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => i % 251);
}

describe("blake3Hex", () => {
  it("hashes the empty input to BLAKE3's published digest", () => {
    expect(blake3Hex(new Uint8Array(0))).toBe(
      "af1349b9f5f9a1a6a0404dea36dcc9499bcb25c9adc112b7cc9a93cae41f3262",
    );
  });

  it("equals @noble/hashes on the official vector lengths (block, chunk and tree edges)", () => {
    const lengths = [
      1, 63, 64, 65, 127, 128, 1023, 1024, 1025, 2048, 2049, 3072, 3073, 4096, 4097, 5120, 5121, 6144, 6145,
      7168, 7169, 8192, 8193, 16384, 31744, 102400,
    ];
    for (const n of lengths) {
      const input = vectorInput(n);
      expect(blake3Hex(input), `length ${n}`).toBe(bytesToHex(blake3(input)));
    }
  });

  it("equals @noble/hashes on any input, and does not depend on what was hashed before", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 9000 }), fc.uint8Array({ maxLength: 3000 }), (a, b) => {
        const first = blake3Hex(a);
        expect(blake3Hex(b)).toBe(bytesToHex(blake3(b)));
        expect(first).toBe(bytesToHex(blake3(a)));
      }),
      { numRuns: 200 },
    );
  });

  it("hashes a view by its own bytes, not by the buffer around it", () => {
    const buffer = vectorInput(3000);
    const view = buffer.subarray(100, 2100);
    expect(blake3Hex(view)).toBe(bytesToHex(blake3(view.slice())));
  });
});
