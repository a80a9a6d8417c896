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
          let expected = "x".repeat(padding);
          w.text(expected);
          for (const [how, s] of writes) {
            if (how === "text") {
              w.text(s);
              expected += s;
            } else if (how === "json") {
              w.jsonString(s);
              expected += JSON.stringify(s);
            } else {
              w.byte(0x2c);
              expected += ",";
            }
          }
          expect(Buffer.from(w.view()).equals(Buffer.from(encoder.encode(expected)))).toBe(true);
        },
      ),
      { numRuns: 300 },
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
