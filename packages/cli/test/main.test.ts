import { execFileSync, spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { type CliIo, main } from "../src/main.js";

function capture(): CliIo & { out: string; err: string } {
  const io = {
    out: "",
    err: "",
    stdout: (t: string) => {
      io.out += t;
    },
    stderr: (t: string) => {
      io.err += t;
    },
  };
  return io;
}

describe("kumiki (in-process)", () => {
  it("prints help and exits 0", async () => {
    const io = capture();
    expect(await main(["--help"], io)).toBe(0);
    expect(io.out).toContain("Usage: kumiki <verb>");
    expect(io.err).toBe("");
  });

  it("refuses an unknown verb by name with exit 2 on stderr only", async () => {
    const io = capture();
    expect(await main(["frobnicate"], io)).toBe(2);
    expect(io.err).toBe("kumiki: unknown verb 'frobnicate': run 'kumiki --help' for the verbs there are\n");
    expect(io.out).toBe("");
  });

  it("refuses an unknown option by name", async () => {
    const io = capture();
    expect(await main(["--frob"], io)).toBe(2);
    expect(io.err).toContain("unknown option '--frob'");
  });
});

describe("the real kumiki binary", () => {
  const bin = fileURLToPath(new URL("../bin/kumiki.js", import.meta.url));

  it("runs compiled JavaScript with no TypeScript loader and prints its version", () => {
    const out = execFileSync(process.execPath, [bin, "--version"], { encoding: "utf8" });
    expect(out).toMatch(/^kumiki \d+\.\d+\.\d+\n$/);
  });

  it("exits 2 for an unknown verb", () => {
    const r = spawnSync(process.execPath, [bin, "nope"], { encoding: "utf8" });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("unknown verb 'nope'");
  });
});
