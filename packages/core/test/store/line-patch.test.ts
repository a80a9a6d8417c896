/**
 * One `body:N` interpreter (ai-edit.md §9.6): the store's edit takes the line form, and a patch
 * normalized from an auto-patch reaches it unchanged, so `kumiki edit`, `kumiki patch apply` and
 * fixes apply the same patch alike — including when the text occurs on other lines too.
 */
import { describe, expect, it } from "vitest";
import { normalizePatch } from "../../src/fix/normalize.js";
import { must, newStore, okValue, refused, text } from "./support.js";

const TILE = "column(\n    text(total.show),\n    text(total.show))";

async function seeded() {
  const { store, log } = newStore();
  await must(store.add({ layer: "slot", name: "total", body: "Int = 0" }));
  await must(store.add({ layer: "slot", name: "count", body: "Int = 0" }));
  await must(store.add({ layer: "tile", name: "Sum", body: TILE }));
  return { store, log };
}

describe("the body:N form of an edit", () => {
  it("changes line N only, though the same text is on another line", async () => {
    const { store } = await seeded();
    await must(store.edit({ qname: "tile.Sum", patch: { "body:3": "replace 'total' -> 'count'" } }));
    expect(text(store, "tile.Sum")).toBe(
      "tile Sum = column(\n    text(total.show),\n    text(count.show))\n",
    );
  });

  it("an auto-patch through normalizePatch and store.apply gives the same text as store.edit", async () => {
    const a = await seeded();
    const b = await seeded();
    const autoPatch = {
      op: "edit",
      layer: "tile",
      name: "Sum",
      patch: { "body:2": "replace 'total' -> 'count'" },
    };
    await must(a.store.edit({ qname: "tile.Sum", patch: autoPatch.patch }));
    await must(b.store.apply(okValue(normalizePatch(autoPatch))));
    expect(text(b.store, "tile.Sum")).toBe(text(a.store, "tile.Sum"));
    expect(text(a.store, "tile.Sum")).toContain("text(count.show),\n    text(total.show)");
  });

  it("a bundle's edit item takes one anchor alone, as kumiki edit does, and writes what the list form writes", async () => {
    const a = await seeded();
    const b = await seeded();
    await must(
      a.store.apply({ ops: [{ op: "edit", qname: "slot.total", patch: [{ find: "0", replace: "5" }] }] }),
    );
    await must(
      b.store.apply({ ops: [{ op: "edit", qname: "slot.total", patch: { find: "0", replace: "5" } }] }),
    );
    expect(text(b.store, "slot.total")).toBe("slot total : Int = 5\n");
    expect(text(b.store, "slot.total")).toBe(text(a.store, "slot.total"));
    // Another key beside them is still refused, naming it.
    const bad = await b.store.apply({
      ops: [{ op: "edit", qname: "slot.total", patch: { find: "5", replace: "6", extra: "x" } }],
    });
    expect(bad.ok).toBe(false);
    expect(!bad.ok && bad.error.message).toMatch(/extra/);
  });

  it("refuses, changing nothing: no such line, text not once on the line, a bad key", async () => {
    const { store, log } = await seeded();
    await refused(
      log,
      store.edit({ qname: "tile.Sum", patch: { "body:9": "replace 'a' -> 'b'" } }),
      "anchor-not-found",
    );
    await refused(
      log,
      store.edit({ qname: "tile.Sum", patch: { "body:2": "replace 'zzz' -> 'y'" } }),
      "anchor-not-found",
    );
    await refused(
      log,
      store.edit({ qname: "tile.Sum", patch: { "body:2": "replace ' ' -> '_'" } }),
      "anchor-ambiguous",
    );
    await refused(
      log,
      store.edit({ qname: "tile.Sum", patch: { "line:2": "replace 'a' -> 'b'" } }),
      "invalid-input",
    );
    await refused(
      log,
      store.edit({ qname: "tile.Sum", patch: { "body:2": "swap 'a' 'b'" } }),
      "invalid-input",
    );
  });
});

describe("one line numbering: refs, remove's referrers, check and edit's body:N", () => {
  it("counts from the layer keyword's line, comment lines above it not counted", async () => {
    const { store } = newStore();
    await must(store.add({ layer: "slot", name: "count", body: "Int = 0" }));
    await must(
      store.add({
        source: '# about Show\n# more\ntile Show = column(\n    text("x"),\n    text(count.show))',
      }),
    );
    expect(okValue(store.refs("slot.count")).referrers.map((r) => r.lines)).toEqual([[3]]);
    const refused = await store.remove({ qname: "slot.count" });
    expect(!refused.ok && refused.error.message).toContain("tile.Show:3");
    // The same line 3 is what body:3 edits.
    await must(
      store.edit({ qname: "tile.Show", patch: { "body:3": "replace 'count.show' -> 'count.show.upper'" } }),
    );
    expect(text(store, "tile.Show")).toContain("text(count.show.upper))");
  });
});

describe("replace keeps the comment lines above a definition", () => {
  it("unless the new text brings its own", async () => {
    const { store } = newStore();
    await must(store.add({ source: '\n# The label\n# shown on top\nslot label : Text = ""' }));
    await must(store.replace({ qname: "slot.label", body: 'Text = "hi"' }));
    // view shows it from its doc comment; the blank line above is kept in the store (and export).
    expect(text(store, "slot.label")).toBe('# The label\n# shown on top\nslot label : Text = "hi"\n');
    const stored = store.view("slot.label");
    expect(stored.ok && stored.value.definitions[0]?.text).toBe(
      '\n# The label\n# shown on top\nslot label : Text = "hi"',
    );
    await must(store.replace({ qname: "slot.label", source: '# new doc\nslot label : Text = "yo"' }));
    expect(text(store, "slot.label")).toBe('# new doc\nslot label : Text = "yo"\n');
  });
});

describe("a replace that changes nothing", () => {
  it("writes no op (no-change); the same text that now binds differently is a write", async () => {
    const { store, log } = newStore();
    await must(store.add({ layer: "slot", name: "x", body: "Int = 0" }));
    await refused(log, store.replace({ qname: "slot.x", body: "Int = 0" }), "no-change");
    // A tile imported with a reference to nothing (stored unbound), then the slot is added: the
    // same text again binds it, so it is a write.
    await must(
      store.apply([{ op: "add", layer: "tile", name: "T", body: "text(later.show)" }], { keepErrors: true }),
    );
    await must(store.add({ layer: "slot", name: "later", body: "Int = 1" }));
    const r = await must(store.replace({ qname: "tile.T", body: "text(later.show)" }));
    expect(r.opIds).toHaveLength(1);
    expect(okValue(store.refs("slot.later")).referrers.map((x) => x.qname)).toEqual(["tile.T"]);
  });

  it("an edit that replaces a text with itself writes no op either (no-change)", async () => {
    const { store, log } = newStore();
    await must(store.add({ layer: "slot", name: "x", body: "Int = 0" }));
    await refused(
      log,
      store.edit({ qname: "slot.x", patch: [{ find: "Int = 0", replace: "Int = 0" }] }),
      "no-change",
    );
    await refused(
      log,
      store.edit({ qname: "slot.x", patch: { "body:1": "replace 'Int' -> 'Int'" } }),
      "no-change",
    );
    expect(
      (await must(store.edit({ qname: "slot.x", patch: [{ find: "0", replace: "1" }] }))).opIds,
    ).toHaveLength(1);
  });
});
