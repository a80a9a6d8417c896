/**
 * startSyncService (what `kumiki serve` calls with its options): storage and tokens named by
 * options, a bad token file refused before anything is made, and the file read again on request.
 */
import fs from "node:fs";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startSyncService } from "../src/service.js";
import { tempDir, tokenFileFor } from "./helpers.js";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
});

const GRAPH = "automerge:4NMNnkMhL8jXrdJ9jamS58PAVdXu";

describe("startSyncService on a folder", () => {
  it("refuses a folder and a database together, or neither, and a bad token file, making nothing", async () => {
    const root = tempDir("service-refused");
    dirs.push(root);
    const data = path.join(root, "graphs");
    const both = await startSyncService({ dataDir: data, storageUrl: "postgres://127.0.0.1/none" });
    expect(both.ok || both.error.code).toBe("invalid-options");
    const neither = await startSyncService({});
    expect(neither.ok || neither.error.code).toBe("invalid-options");
    const file = path.join(root, "tokens.json");
    fs.writeFileSync(file, "{ not json");
    const bad = await startSyncService({ dataDir: data, tokenFile: file });
    expect(bad.ok || bad.error.code).toBe("token-file-invalid");
    expect(fs.existsSync(data)).toBe(false);
  });

  it("takes the token file's tokens, and reads the file again on request", async () => {
    const root = tempDir("service-tokens");
    dirs.push(root);
    const file = path.join(root, "tokens.json");
    fs.writeFileSync(file, tokenFileFor(GRAPH));
    const started = await startSyncService({ dataDir: path.join(root, "graphs"), tokenFile: file });
    if (!started.ok) throw new Error(started.error.message);
    const service = started.value;
    try {
      expect(service.server.health().auth).toBe("tokens");
      expect(service.where).toBe(path.join(root, "graphs"));
      expect(service.tokens?.size).toBe(5);
      const one = JSON.parse(fs.readFileSync(file, "utf8"));
      fs.writeFileSync(file, JSON.stringify({ ...one, tokens: one.tokens.slice(0, 2) }));
      expect(await service.reloadTokens()).toEqual({ ok: true, value: { tokens: 2, stored: false } });
      expect(service.tokens?.size).toBe(2);
      fs.writeFileSync(file, "[]");
      const refused = await service.reloadTokens();
      expect(refused.ok || refused.error.code).toBe("token-file-invalid");
      expect(service.tokens?.size).toBe(2);
    } finally {
      await service.close();
    }
  });

  it("without a token file is open, and has no file to read again", async () => {
    const root = tempDir("service-open");
    dirs.push(root);
    const started = await startSyncService({ dataDir: path.join(root, "graphs") });
    if (!started.ok) throw new Error(started.error.message);
    try {
      expect(started.value.server.health().auth).toBe("none");
      const r = await started.value.reloadTokens();
      expect(r.ok || r.error.code).toBe("no-token-file");
    } finally {
      await started.value.close();
    }
  });
});
