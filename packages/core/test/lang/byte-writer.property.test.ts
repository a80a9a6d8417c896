import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ByteWriter } from "../../src/lang/byte-writer.js";

const encoder = new TextEncoder();

/** Any UTF-16 string, lone surrogates included. */
const anyString = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) });
/** Mostly printable ASCII, where the writer takes its fast path. */
const asciiString = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((c) => String.fromCharCode(c)),
});
const someString = fc.oneof(anyString, asciiString, fc.string({ unit: "binary" }));

describe("ByteWriter", () => {
  it("writes text and JSON strings exactly as TextEncoder encodes them, across buffer growth", () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom("text", "json", "byte"), someString), { maxLength: 40 }),
        fc.integer({ min: 0, max: 5000 }),
        (writes, padding) => {
          const w = new ByteWriter();
          // Each call is encoded on its own, as TextEncoder encodes that call's string: a high
          // surrogate ending one call and a low one starting the next are two lone surrogates
          // (U+FFFD each), not one pair (seed 732382657 found the difference).
          const pad = "x".repeat(padding);
          const expected: Uint8Array[] = [encoder.encode(pad)];
          w.text(pad);
          for (const [how, s] of writes) {
            if (how === "text") {
              w.text(s);
              expected.push(encoder.encode(s));
            } else if (how === "json") {
              w.jsonString(s);
              expected.push(encoder.encode(JSON.stringify(s)));
            } else {
              w.byte(0x2c);
              expected.push(encoder.encode(","));
            }
          }
          expect(Buffer.from(w.view()).equals(Buffer.concat(expected))).toBe(true);
        },
      ),
      { numRuns: 300, seed: Number(process.env.KUMIKI_PROPERTY_SEED ?? 732382657) },
    );
  });

  it("starts over on reset and appends raw bytes as given", () => {
    const w = new ByteWriter();
    w.text("é".repeat(3000));
    w.reset();
    w.text("ab");
    w.bytes(Uint8Array.of(0, 255));
    expect([...w.view()]).toEqual([0x61, 0x62, 0, 255]);
  });
});
