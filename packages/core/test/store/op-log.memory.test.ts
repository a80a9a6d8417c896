// Through the package's ./testing entry, as a third-party log's tests would call it.
import { runOpLogSuite } from "@kumiki-graph/core/testing";
import { describe, expect, it } from "vitest";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { OpLog } from "../../src/store/op-log.js";
import { op } from "../../src/testing/op-log-suite.js";

runOpLogSuite("MemoryOpLog", {
  create: async () => new MemoryOpLog(),
  deliver: async (log: OpLog, ops) => {
    (log as MemoryOpLog).receive(ops);
  },
});

describe("MemoryOpLog", () => {
  it("starts from initial ops, deduplicated, without announcing them", () => {
    const a = op();
    const log = new MemoryOpLog([a, a, op()]);
    expect(log.all()).toHaveLength(2);
  });

  it("receive returns only the new ops and refuses after close", async () => {
    const log = new MemoryOpLog();
    const a = op();
    expect(log.receive([a, a])).toEqual([a]);
    expect(log.receive([a])).toEqual([]);
    await log.close();
    expect(() => log.receive([op()])).toThrow();
  });
});
