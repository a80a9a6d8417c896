// What examples/browser/index.html does with @kumiki-graph/core in the page, written once so that
// its test (packages/core/test/browser.e2e.test.ts) runs the same steps in Node and compares.
// `core` is the package's module: the browser entry in the page, the main entry in Node.

/** @param {typeof import("@kumiki-graph/core")} core */
export async function scenario(core) {
  const opened = core.openStore({ log: new core.MemoryOpLog(), author: "user:page" });
  if (!opened.ok) throw new Error(opened.error.message);
  const store = opened.value;
  const steps = [];
  const write = async (what, run) => {
    const r = await run();
    steps.push(
      r.ok
        ? `${what}: stored ${r.value.opIds.length} op(s)`
        : `${what}: refused (${r.error.code}) ${r.error.message}`,
    );
  };
  await write("add slot.count", () => store.add({ layer: "slot", name: "count", body: ": Int = 0" }));
  // The checker is the write gate, in the page as in Node: a type error is refused.
  await write("add slot.label", () => store.add({ layer: "slot", name: "label", body: ': Int = "three"' }));
  await write("add slot.twice", () =>
    store.add({ layer: "slot", name: "twice", body: ": Int = count + count" }),
  );
  // A rename changes no dependent's op, and every dependent shows the new name.
  await write("rename slot.count", () => store.rename({ qname: "slot.count", newName: "total" }));
  const view = store.view("slot.*");
  const report = core.checkStore(store);
  await store.close();
  return {
    steps,
    program: view.ok ? view.value.text : view.error.message,
    check: report.diagnostics.map((d) => `${d.code} ${d.location}`),
  };
}
