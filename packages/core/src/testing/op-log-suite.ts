/**
 * The contract every OpLog implementation keeps, as one suite run against each (after
 * automerge-repo's storage adapter test suite): call {@link runOpLogSuite} with a harness.
 */
import fc from "fast-check";
import { afterEach, describe, expect, it } from "vitest";
import type { OpLog, StoredOp } from "../store/op-log.js";

/** What the suite needs to drive one implementation. */
export interface OpLogHarness {
  /** A fresh, empty log (in its own storage). */
  create(): Promise<OpLog>;
  /** Closes `log` and opens its storage again (persistent implementations only). */
  reopen?(log: OpLog): Promise<OpLog>;
  /**
   * Makes `ops` arrive at `log` from elsewhere (a peer, another process) and waits until `log` has
   * taken them in, so its onRemote listeners have been called.
   */
  deliver(log: OpLog, ops: readonly StoredOp[]): Promise<void>;
  /** Runs after each test (remove temp dirs). */
  cleanup?(): Promise<void>;
  /** fast-check runs for the property (persistent logs are slower). */
  readonly propertyRuns?: number;
}

/** An op as the suite makes it ({@link op}). */
export interface TestOp extends StoredOp {
  readonly op: string;
  readonly n: number;
  readonly body?: string;
}

let counter = 0;
/** An op with a fresh, sortable op-id. */
export function op(n = counter, extra: Record<string, unknown> = {}): TestOp {
  counter++;
  return {
    "op-id": `op_${String(n).padStart(6, "0")}_${counter}`,
    op: "add",
    n,
    body: `slot s${n} = ${n}`,
    ...extra,
  };
}

const ids = (ops: readonly StoredOp[]) => ops.map((o) => o["op-id"]);

/** Registers the shared OpLog tests for one implementation. */
export function runOpLogSuite(name: string, h: OpLogHarness): void {
  describe(`OpLog contract: ${name}`, () => {
    const open: OpLog[] = [];
    const track = (log: OpLog) => {
      open.push(log);
      return log;
    };
    const fresh = async () => track(await h.create());
    const reopen = async (log: OpLog) => {
      if (!h.reopen) throw new Error("not persistent");
      return track(await h.reopen(log));
    };

    afterEach(async () => {
      for (const log of open.splice(0)) await log.close().catch(() => undefined);
      await h.cleanup?.();
    });

    it("starts empty", async () => {
      const log = await fresh();
      expect(log.all()).toEqual([]);
    });

    it("appends and lists ops in arrival order, returning what it added", async () => {
      const log = await fresh();
      const a = op(3);
      const b = op(1);
      const c = op(2);
      expect(await log.append([a])).toEqual([a]);
      expect(await log.append([b, c])).toEqual([b, c]);
      expect(log.all()).toEqual([a, b, c]);
    });

    it("skips op-ids it holds, and repeats within one call", async () => {
      const log = await fresh();
      const a = op();
      const b = op();
      await log.append([a]);
      expect(await log.append([a, b, { ...b, body: "other" }])).toEqual([b]);
      expect(await log.append([a, b])).toEqual([]);
      expect(ids(log.all())).toEqual(ids([a, b]));
    });

    it("holds copies: changing an op after appending it changes nothing stored", async () => {
      const log = await fresh();
      const a = { ...op(), tags: ["x"] };
      await log.append([a]);
      a.tags.push("y");
      expect((log.all()[0] as unknown as { tags: string[] }).tags).toEqual(["x"]);
    });

    it("is all or nothing: one bad op refuses the whole call", async () => {
      const log = await fresh();
      const a = op();
      await log.append([a]);
      const bad: unknown[] = [
        { op: "add" },
        { "op-id": 7 },
        { "op-id": "" },
        null,
        ["op-id"],
        { "op-id": "op_big", n: 10n },
      ];
      for (const b of bad) {
        await expect(log.append([op(), b as StoredOp, op()])).rejects.toThrow();
        expect(ids(log.all())).toEqual([a["op-id"]]);
      }
      if (h.reopen) {
        const again = await reopen(log);
        expect(ids(again.all())).toEqual([a["op-id"]]);
      }
    });

    it("appending nothing, or only known ops, changes nothing", async () => {
      const log = await fresh();
      expect(await log.append([])).toEqual([]);
      const a = op();
      await log.append([a]);
      expect(await log.append([a])).toEqual([]);
      expect(log.all()).toEqual([a]);
    });

    it("runs concurrent appends one after another, each resolving with its own ops", async () => {
      const log = await fresh();
      const batches = Array.from({ length: 8 }, (_, i) => [op(i), op(i)]);
      const results = await Promise.all(batches.map((b) => log.append(b)));
      expect(results).toEqual(batches);
      expect(ids(log.all())).toEqual(ids(batches.flat()));
    });

    it("tells onRemote listeners about ops from elsewhere, after holding them", async () => {
      const log = await fresh();
      const local = op();
      await log.append([local]);
      const seen: string[][] = [];
      const heldWhenCalled: boolean[] = [];
      const unsubscribe = log.onRemote((ops) => {
        seen.push(ids(ops));
        heldWhenCalled.push(ops.every((o) => log.all().some((x) => x["op-id"] === o["op-id"])));
      });
      const r1 = [op(), op()];
      await h.deliver(log, r1);
      expect(seen).toEqual([ids(r1)]);
      expect(heldWhenCalled).toEqual([true]);
      // Known ops are not announced again; local appends are never announced.
      await h.deliver(log, [r1[0]!, local]);
      await log.append([op()]);
      expect(seen).toEqual([ids(r1)]);
      unsubscribe();
      const r2 = [op()];
      await h.deliver(log, r2);
      expect(seen).toEqual([ids(r1)]);
      expect(ids(log.all())).toEqual(expect.arrayContaining(ids([local, ...r1, ...r2])));
      expect(log.all()).toHaveLength(5);
    });

    it("refuses appends after close", async () => {
      const log = await fresh();
      await log.close();
      await expect(log.append([op()])).rejects.toThrow();
    });

    if (h.reopen) {
      it("keeps everything across reopening, in order, still deduplicating", async () => {
        let log = await fresh();
        const first = [op(5), op(4)];
        await log.append(first);
        await log.append([op(9)]);
        const before = log.all().map((o) => ({ ...o }));
        log = await reopen(log);
        expect(log.all()).toEqual(before);
        expect(await log.append([first[0]!, op(1)])).toHaveLength(1);
        const after = log.all().map((o) => ({ ...o }));
        log = await reopen(log);
        expect(log.all()).toEqual(after);
      });
    }

    it("matches a model under random appends with repeated op-ids (property)", async () => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(fc.array(fc.integer({ min: 0, max: 12 }), { maxLength: 4 }), { maxLength: 8 }),
          async (calls) => {
            const log = await fresh();
            const model: string[] = [];
            for (const call of calls) {
              const batch = call.map((k) => ({ "op-id": `op_${k}`, op: "add", k }));
              const expected: string[] = [];
              for (const b of batch) {
                if (!model.includes(b["op-id"]) && !expected.includes(b["op-id"])) expected.push(b["op-id"]);
              }
              expect(ids(await log.append(batch))).toEqual(expected);
              model.push(...expected);
            }
            expect(ids(log.all())).toEqual(model);
            if (h.reopen && calls.length > 0) expect(ids((await reopen(log)).all())).toEqual(model);
            for (const l of open.splice(0)) await l.close();
            await h.cleanup?.();
          },
        ),
        { numRuns: h.propertyRuns ?? 100 },
      );
    });
  });
}
