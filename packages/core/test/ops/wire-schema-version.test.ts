/**
 * A reader trusts op-log.jsonl's "every line passed isWireOp" only under the WIRE_SCHEMA_VERSION it
 * was recorded with. This pins what isWireOp is made of, so that changing it is a decision: when
 * this fails, decide whether isWireOp now accepts an op it refused or refuses one it accepted; if
 * so, bump WIRE_SCHEMA_VERSION (op.ts); then pin the new digest here.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { describe, expect, it } from "vitest";
import { KEYWORDS } from "../../src/lang/lexer.js";
import { WIRE_SCHEMA_VERSION } from "../../src/ops/op.js";

const FILES = ["../../src/ops/op.ts", "../../src/ops/ids.ts", "../../src/lang/layers.ts"];

describe("the wire schema's version", () => {
  it("is pinned with the text of what isWireOp is made of", () => {
    const h = createHash("sha256");
    for (const f of FILES) h.update(fs.readFileSync(new URL(f, import.meta.url)));
    h.update(JSON.stringify([...KEYWORDS].sort()));
    expect({ version: WIRE_SCHEMA_VERSION, digest: h.digest("hex") }).toEqual({
      version: 1,
      digest: "df3d2348a1634ec2c7c32cb90baca9c1c3ef5403873ec7a4a2523da2f718dc77",
    });
  });
});
