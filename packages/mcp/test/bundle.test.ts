/**
 * kumiki_apply and kumiki_revert through a real SDK client over stdio: the button pattern (a tile
 * whose onClick names the reducer triggered by a click on that tile) in one call, a dry run then
 * exactly what it showed, an auto-patch from kumiki_check taken as it is, and revert / task undo.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { dispose, errorOf, ok, type Session, serve, tempDir, workspaceFrom } from "./support/session.js";

describe("kumiki_apply and kumiki_revert", () => {
  let dir: string | undefined;
  let s: Session;
  beforeAll(async () => {
    dir = await tempDir("bundle");
    await workspaceFrom(dir, "slot count : Int = 0\n");
    s = await serve(dir);
  }, 60_000);
  afterAll(async () => {
    await s?.close();
    await dispose(dir);
  });

  it("adds the button pattern (tile ↔ reducer) in one call; each alone is refused", async () => {
    const alone = await s.call("kumiki_add", {
      layer: "tile",
      name: "IncBtn",
      body: 'button("+", onClick=inc)',
    });
    expect(errorOf(alone).code).toBe("undefined-reference");
    const r = ok(
      await s.call("kumiki_apply", {
        ops: [
          { op: "add", layer: "tile", name: "IncBtn", body: 'button("+", onClick=inc)' },
          { op: "add", layer: "reducer", name: "inc", body: "on=ui.click(IncBtn) do= count := count + 1" },
        ],
        task: "button",
      }),
    );
    expect(r.dryRun).toBe(false);
    expect((r.opIds as string[]).length).toBeGreaterThanOrEqual(2);
    expect(ok(await s.call("kumiki_view", { selector: "reducer.inc" })).text).toContain("count := count + 1");
  });

  it("a dry run writes nothing; expect applies exactly it, or fails once the graph moved", async () => {
    const ops = [{ op: "replace", layer: "slot", name: "count", body: "Int = 5" }];
    const preview = ok(await s.call("kumiki_apply", { ops, dry_run: true }));
    expect(preview.opIds).toEqual([]);
    expect(preview.diff).toContain("Int = 5");
    expect(ok(await s.call("kumiki_view", { selector: "slot.count" })).text).toContain("Int = 0");
    ok(await s.call("kumiki_apply", { ops, expect: preview.fingerprint }));
    expect(ok(await s.call("kumiki_view", { selector: "slot.count" })).text).toContain("Int = 5");
    const stale = await s.call("kumiki_apply", { ops, expect: preview.fingerprint });
    expect(errorOf(stale).code).toMatch(/fingerprint-mismatch|no-change/);
  });

  it("takes an auto-patch from kumiki_check as it is", async () => {
    // A second workspace that starts broken (as a faithful import leaves it).
    const broken = await tempDir("bundle-broken");
    await workspaceFrom(
      broken,
      'slot count : Int = 0\ntile Btn = button("+")\nreducer inc on=ui.click(Btn) do= conut := count + 1\nreducer dec on=ui.click(Btn) do= count := cuont - 1\n',
      { withErrors: true },
    );
    const b = await serve(broken);
    try {
      const checked = ok(await b.call("kumiki_check", {}));
      const fixable = (checked.diagnostics as { code: string; "auto-patch"?: unknown }[]).filter(
        (d) => d["auto-patch"] !== undefined,
      );
      expect(fixable.map((d) => d.code)).toEqual(["E0103", "E0103"]);
      // kumiki_fix_apply with a proposal id: only that one; an id that is not there is named as such.
      const listed = ok(await b.call("kumiki_fix", { error_code: "E0103" })).proposals as { id: string }[];
      const missing = await b.call("kumiki_fix_apply", { error_code: "E0103", proposal_id: "E0103@nowhere" });
      expect(errorOf(missing).message).toContain(listed[0]!.id);
      const one = ok(await b.call("kumiki_fix_apply", { error_code: "E0103", proposal_id: listed[1]!.id }));
      expect((one.applied as { id: string }[]).map((a) => a.id)).toEqual([listed[1]!.id]);
      expect(one.remaining).toMatchObject({ errors: 2 }); // the other typo, and E0003 (no app)
      const left = (ok(await b.call("kumiki_check", {})).diagnostics as { "auto-patch"?: unknown }[]).filter(
        (d) => d["auto-patch"] !== undefined,
      );
      expect(left).toHaveLength(1);
      ok(await b.call("kumiki_apply", { ops: [left[0]!] }));
      const after = ok(await b.call("kumiki_check", {})).diagnostics as { code: string }[];
      expect(after.filter((d) => d.code !== "E0003")).toEqual([]);
    } finally {
      await b.close();
      await dispose(broken);
    }
  }, 60_000);

  it("reverts one op, and undoes a task", async () => {
    const w = ok(await s.call("kumiki_replace", { qname: "slot.count", body: "Int = 7" }));
    const [op] = w.opIds as string[];
    ok(await s.call("kumiki_revert", { op_id: op }));
    expect(ok(await s.call("kumiki_view", { selector: "slot.count" })).text).toContain("Int = 5");
    ok(await s.call("kumiki_revert", { task_id: "button" }));
    expect((await s.call("kumiki_view", { selector: "tile.IncBtn" })).isError).toBe(true);
    const both = await s.call("kumiki_revert", { op_id: op, task_id: "button" });
    expect(errorOf(both).kind).toBe("invalid-argument");
  });
});
