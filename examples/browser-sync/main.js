// A Kumiki graph in a page (issue 40): @kumiki-graph/storage-automerge's browser entry keeps the graph
// in this page's IndexedDB and, given a server, in step with `kumiki serve` over WebSocket. Built
// with Vite (`npx vite build examples/browser-sync`); `window.kumikiPage` is what the page does, for
// a console or a test (packages/cli/test/browser-sync.e2e.test.ts) to call.
import { openBrowserStore } from "@kumiki-graph/storage-automerge/browser";

const $ = (id) => document.getElementById(id);
/** @type {import("@kumiki-graph/storage-automerge/browser").BrowserStore | undefined} */
let opened;

/** Shows the graph as it is now: its URL, how many ops, every definition's text. */
function render() {
  if (opened === undefined) return;
  const view = opened.store.view("*");
  $("graph").textContent = opened.graph;
  $("ops").textContent = String(opened.log.all().length);
  $("program").textContent = view.ok ? view.value.text : `(${view.error.code}) ${view.error.message}`;
  $("program").dataset.state = "open";
}

/** Opens a graph (see BrowserStoreOptions); a refusal is returned as it is, and shown. */
async function open(options) {
  await close();
  const r = await openBrowserStore(options);
  if (!r.ok) {
    $("program").textContent = `not opened (${r.error.code}): ${r.error.message}`;
    $("program").dataset.state = "refused";
    return { ok: false, error: r.error };
  }
  opened = r.value;
  // Another writer's ops (the server's, from a workspace's `kumiki sync`) arrive while open.
  opened.store.onChange(render);
  render();
  return { ok: true, graph: opened.graph, ops: opened.log.all().length };
}

/** Adds a definition; says what the store answered (a type error is refused, as in Node). */
async function add(input) {
  if (opened === undefined)
    return { ok: false, error: { code: "store-closed", message: "no graph is open" } };
  const r = await opened.store.add(input);
  $("said").textContent = r.ok
    ? `stored ${r.value.opIds.length} op(s)`
    : `refused (${r.error.code}): ${r.error.message}`;
  render();
  return r.ok
    ? { ok: true, opIds: r.value.opIds }
    : { ok: false, error: { code: r.error.code, message: r.error.message } };
}

/** The program's text (every definition), as the page shows it. */
function program() {
  return $("program").textContent;
}

async function close() {
  const o = opened;
  opened = undefined;
  await o?.close();
}

window.kumikiPage = { open, add, program, close };

$("add").addEventListener("submit", (e) => {
  e.preventDefault();
  const f = new FormData(e.target);
  void add({ layer: String(f.get("layer")), name: String(f.get("name")), body: String(f.get("body")) });
});

const q = new URLSearchParams(location.search);
const server = q.get("server");
open({
  author: q.get("author") ?? "user:page",
  ...(q.get("graph") ? { graph: q.get("graph") } : {}),
  ...(server ? { server: { url: server, ...(q.get("token") ? { token: q.get("token") } : {}) } } : {}),
}).then((r) => {
  // A new graph: its URL in the address bar, so that a reload opens it again from IndexedDB.
  if (r.ok && !q.get("graph")) history.replaceState(null, "", `?graph=${encodeURIComponent(r.graph)}`);
});
