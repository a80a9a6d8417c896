// The live view's page: the map, a definition's page, the agents' activity and the conflicts,
// each drawn from the server's JSON (api/overview, api/definitions/<def>) and drawn again when the
// server's event stream (api/events) says the graph has a new version. Read-only, unless api/me
// says this visitor may write: then a definition's page offers replace and revert, the locks
// unlock, each one POST of api/write (the store's own verb; its answer is shown as it is).
import { drawMap } from "./map.js";

const main = document.getElementById("main");
const summary = document.getElementById("summary");
const live = document.getElementById("live");
let overview;
let query = "";
/** `{write, author?}`: whether this visitor may write (a token that grants it), as whom. */
let me = { write: false };
/** The answer to the last write, shown until the view changes (the page is drawn again as it lands). */
let note;

const esc = (s) =>
  String(s).replace(
    /[&<>"']/g,
    (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c],
  );
const when = (ts) => new Date(ts).toISOString().replace("T", " ").slice(0, 19);
const defLink = (def, label) => `<a href="#/def/${encodeURIComponent(def)}">${esc(label)}</a>`;

async function getJson(url) {
  const res = await fetch(url, { cache: "no-store" });
  const body = await res.json();
  if (!res.ok) throw new Error(body?.error?.message ?? `${url}: HTTP ${res.status}`);
  return body;
}

/** One write through the server; its answer (a receipt, or the refusal with its remedy) is shown. */
async function write(body) {
  const out = document.getElementById("write-result");
  const res = await fetch("api/write", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const answer = await res.json();
  note = {
    hash: location.hash,
    className: res.ok ? "ok" : "err",
    text: res.ok
      ? `written as ${me.author}: ${(answer.opIds ?? []).join(", ")}`
      : `refused (${answer.error?.code}): ${answer.error?.message}`,
  };
  showNote(out);
  return res.ok;
}

function showNote(out = document.getElementById("write-result")) {
  if (out === null || note === undefined || note.hash !== location.hash) return;
  out.className = note.className;
  out.textContent = note.text;
}

async function refresh() {
  overview = await getJson("api/overview");
  const errors = overview.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = overview.diagnostics.length - errors;
  summary.textContent = `${overview.definitions.length} definitions · ${errors} errors · ${warnings} warnings · ${overview.conflicts.length} conflicts · ${overview.authors.length} authors · ${overview.ops} ops`;
  document.body.dataset.version = overview.version;
  document.body.dataset.definitions = String(overview.definitions.length);
  await render();
}

async function render() {
  const [, view, arg] = /^#\/([a-z]*)\/?(.*)$/.exec(location.hash) ?? [];
  for (const a of document.querySelectorAll("nav a"))
    a.classList.toggle("current", a.dataset.view === (view === "" || view === undefined ? "map" : view));
  if (view === "def") await renderDefinition(decodeURIComponent(arg));
  else if (view === "activity") renderActivity();
  else if (view === "conflicts") renderConflicts();
  else renderMap();
  showNote();
  document.body.dataset.rendered = `${view || "map"} ${overview.version}`;
}

function renderMap() {
  let canvas = document.getElementById("map");
  if (canvas === null) {
    main.innerHTML = `<div class="toolbar"><input id="search" type="search" placeholder="search by name (slot.count, Todo*)" aria-label="search by name">
      <span class="legend"><span><i style="background:#fbe3e3;border:1px solid #c62828"></i>error</span><span><i style="background:#fcf0d8;border:1px solid #b7791f"></i>warning</span><span><i style="background:#ffe66b"></i>match</span></span></div>
      <div id="matches"></div><canvas id="map"></canvas>`;
    canvas = document.getElementById("map");
    const search = document.getElementById("search");
    search.value = query;
    search.addEventListener("input", () => {
      query = search.value;
      mark(canvas);
    });
  }
  drawMap(canvas, overview, (def) => {
    location.hash = `#/def/${encodeURIComponent(def)}`;
  });
  mark(canvas);
}

/** Marks the definitions whose name matches the search (`*` any run of characters; `layer.` prefix allowed). */
function mark(canvas) {
  const q = query.trim();
  const out = document.getElementById("matches");
  if (q === "") {
    canvas.__marked = new Set();
    out.innerHTML = "";
  } else {
    const re = new RegExp(`^${q.replace(/[.+?^${}()|[\]\\]/g, "\\$&").replace(/\*/g, ".*")}`, "i");
    const hits = overview.definitions.filter((d) => re.test(d.name) || re.test(`${d.layer}.${d.name}`));
    canvas.__marked = new Set(hits.map((d) => d.def));
    out.innerHTML = `${hits.length} match${hits.length === 1 ? "" : "es"}: ${hits
      .slice(0, 40)
      .map((d) => defLink(d.def, `${d.layer}.${d.name}`))
      .join(" ")}${hits.length > 40 ? " …" : ""}`;
  }
  canvas.__paint();
}

async function renderDefinition(def) {
  let p;
  try {
    p = await getJson(`api/definitions/${encodeURIComponent(def)}`);
  } catch (e) {
    main.innerHTML = `<p class="err">${esc(e.message)}</p>`;
    return;
  }
  const v = p.view;
  const revert = (e) =>
    me.write && e.status === "applied" ? ` <button data-revert="${esc(e.opId)}">revert</button>` : "";
  const editor =
    me.write && v.alive
      ? `<form id="replace"><textarea name="source" cols="100" rows="${Math.min(20, v.text.split("\n").length + 1)}" spellcheck="false">${esc(v.text)}</textarea>
      <br><button type="submit">replace as ${esc(me.author)}</button> <span class="muted">the store's gate checks it as any writer's</span></form>`
      : "";
  const history = p.history
    .map(
      (
        e,
      ) => `<tr><td>${when(e.ts)}</td><td>${esc(e.author)}</td><td>${esc(e.task ?? "")}</td><td>${esc(e.op)}${e.newName ? ` → ${esc(e.newName)}` : ""}${revert(e)}</td>
      <td class="${e.status === "applied" ? "" : "err"}">${esc(e.status)}${e.conflict ? ` (${esc(e.conflict)})` : ""}</td><td class="diff">${diff(e.before, e.after)}</td></tr>`,
    )
    .join("");
  main.innerHTML = `<h2>${esc(v.qname)} ${v.alive ? "" : '<span class="err">(removed)</span>'} ${v.visible || !v.alive ? "" : '<span class="warn">(hidden by a name conflict)</span>'}</h2>
    <p class="muted"><code>${esc(v.def)}</code> · hash <code>${esc(p.hash ?? "—")}</code> · version <code>${esc(v.version)}</code></p>
    <pre id="text">${esc(v.text)}</pre>${editor}<p id="write-result" role="status"></p>
    ${p.diagnostics.length === 0 ? '<p class="muted">no findings</p>' : `<ul>${p.diagnostics.map((d) => `<li class="${d.severity === "error" ? "err" : "warn"}">${esc(d.code)} ${esc(d.location)}: ${esc(d.message)}</li>`).join("")}</ul>`}
    <p><strong>Uses</strong> (${p.uses.length}): ${p.uses.map((l) => defLink(l.def, l.qname)).join(", ") || '<span class="muted">nothing</span>'}</p>
    <p><strong>Used by</strong> (${p.usedBy.length}): ${p.usedBy.map((l) => defLink(l.def, l.qname)).join(", ") || '<span class="muted">nothing</span>'}</p>
    <h3>History (${p.history.length} ops)</h3><table id="history"><tr><th>when</th><th>author</th><th>task</th><th>op</th><th>status</th><th>change</th></tr>${history}</table>
    <h3>Conflicts</h3>${conflictList(p.conflicts)}`;
  document.getElementById("replace")?.addEventListener("submit", (ev) => {
    ev.preventDefault();
    void write({ verb: "replace", qname: v.def, source: ev.target.source.value });
  });
  for (const b of main.querySelectorAll("[data-revert]"))
    b.addEventListener("click", () => void write({ verb: "revert", opId: b.dataset.revert }));
}

/** A line diff of two texts (what an op changed), by their longest common run of lines. */
function diff(before, after) {
  const a = before === undefined ? [] : before.split("\n");
  const b = after === undefined ? [] : after.split("\n");
  const n = a.length;
  const m = b.length;
  if (n * m > 250_000) return `<ins>${esc(after ?? "")}</ins>`;
  const lcs = Array.from({ length: n + 1 }, () => new Array(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      lcs[i][j] = a[i] === b[j] ? lcs[i + 1][j + 1] + 1 : Math.max(lcs[i + 1][j], lcs[i][j + 1]);
  const out = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) {
      out.push(`<span>${esc(a[i])}</span>`);
      i++;
      j++;
    } else if (i < n && (j === m || lcs[i + 1][j] >= lcs[i][j + 1])) out.push(`<del>${esc(a[i++])}</del>`);
    else out.push(`<ins>${esc(b[j++])}</ins>`);
  }
  return out.join("");
}

function conflictList(conflicts) {
  if (conflicts.length === 0) return '<p class="muted">none</p>';
  return `<table class="conflicts"><tr><th>record</th><th>what happened</th><th>decision</th><th>to retry</th><th>definitions</th></tr>${conflicts
    .map(
      (
        c,
      ) => `<tr><td><code>${esc(c.id)}</code></td><td>${esc(c.reason)}</td><td>${esc(c.decision)}</td><td>${esc(c.retry)}</td>
      <td>${c.definitions.map((d) => defLink(d, label(d))).join("<br>")}</td></tr>`,
    )
    .join("")}</table>`;
}

function label(def) {
  const d = overview.definitions.find((x) => x.def === def);
  return d === undefined ? def : `${d.layer}.${d.name}`;
}

function renderActivity() {
  const authors = overview.authors
    .map(
      (a) =>
        `<tr><td>${esc(a.author)}</td><td>${a.ops}</td><td class="${a.lost > 0 ? "err" : ""}">${a.lost}</td><td>${when(a.last)}</td></tr>`,
    )
    .join("");
  const ops = overview.activity
    .map(
      (
        o,
      ) => `<tr><td>${when(o.ts)}</td><td>${esc(o.author)}</td><td>${esc(o.task ?? "")}</td><td>${esc(o.op)}</td>
      <td>${o.def ? defLink(o.def, o.qname ?? o.def) : esc(o.qname ?? "")}</td><td class="${o.status === "applied" ? "" : "err"}">${esc(o.status)}${o.conflict ? ` — <a href="#/conflicts">${esc(o.conflict)}</a>` : ""}</td></tr>`,
    )
    .join("");
  const locks = overview.locks
    .map(
      (l) =>
        `<tr><td>${esc(l.agent)}</td><td><code>${esc(l.pattern)}</code>${me.write ? ` <button data-unlock="${esc(l.agent)}" data-pattern="${esc(l.pattern)}">unlock</button>` : ""}</td><td>${when(l.ts)}</td></tr>`,
    )
    .join("");
  main.innerHTML = `<h3>Timeline of the latest ops, per author</h3>${timeline()}<div class="cols"><div><h3>Authors</h3><table id="authors"><tr><th>author</th><th>ops</th><th>did not take effect</th><th>last write</th></tr>${authors}</table></div>
    <div><h3>Locks in force</h3>${locks === "" ? '<p class="muted">none</p>' : `<table id="locks"><tr><th>agent</th><th>pattern</th><th>since</th></tr>${locks}</table>`}</div></div>
    <h3>Latest ops (${overview.activity.length} of ${overview.ops})</h3><p id="write-result" role="status"></p><table id="activity"><tr><th>when</th><th>author</th><th>task</th><th>op</th><th>definition</th><th>status</th></tr>${ops}</table>`;
  for (const b of main.querySelectorAll("[data-unlock]"))
    b.addEventListener(
      "click",
      () => void write({ verb: "unlock", agent: b.dataset.unlock, patterns: [b.dataset.pattern] }),
    );
}

/**
 * The latest ops on a time axis, a lane per author (the twelve most recent writers): a dot per op,
 * red when it did not take effect; pointing at one says what it was.
 */
function timeline() {
  const ops = overview.activity;
  if (ops.length === 0) return '<p class="muted">no ops</p>';
  const lanes = overview.authors.slice(0, 12).map((a) => a.author);
  const lane = new Map(lanes.map((a, i) => [a, i]));
  const t0 = Math.min(...ops.map((o) => o.ts));
  const t1 = Math.max(...ops.map((o) => o.ts));
  const left = 170;
  const width = 1000;
  const x = (ts) => left + (t1 === t0 ? width / 2 : ((ts - t0) / (t1 - t0)) * width);
  const dots = ops
    .filter((o) => lane.has(o.author))
    .map((o) => {
      const bad = o.status !== "applied";
      const what = `${when(o.ts)} ${o.author} ${o.op} ${o.qname ?? ""} ${o.status}${o.task ? ` (task ${o.task})` : ""}`;
      return `<circle cx="${x(o.ts).toFixed(1)}" cy="${lane.get(o.author) * 22 + 16}" r="${bad ? 5 : 3.5}" fill="${bad ? "#c62828" : "#2851a3"}" fill-opacity="${bad ? 1 : 0.6}"><title>${esc(what)}</title></circle>`;
    })
    .join("");
  const names = lanes
    .map(
      (a, i) =>
        `<text x="4" y="${i * 22 + 20}" font-size="12">${esc(a.slice(0, 24))}</text><line x1="${left}" x2="${left + width}" y1="${i * 22 + 16}" y2="${i * 22 + 16}" stroke="#e3e7ef"/>`,
    )
    .join("");
  const h = lanes.length * 22 + 30;
  return `<svg id="timeline" width="${left + width + 20}" height="${h}" role="img" aria-label="ops per author over time">${names}${dots}
    <text x="${left}" y="${h - 4}" font-size="11" fill="#6b7385">${when(t0)}</text><text x="${left + width}" y="${h - 4}" font-size="11" fill="#6b7385" text-anchor="end">${when(t1)}</text></svg>`;
}

function renderConflicts() {
  main.innerHTML = `<h3>Conflict records (${overview.conflicts.length})</h3>${conflictList(overview.conflicts)}`;
}

window.addEventListener("hashchange", () => void render());
me = await getJson("api/me");
const events = new EventSource("api/events");
let seen;
events.addEventListener("version", (ev) => {
  live.classList.remove("stale");
  const version = JSON.parse(ev.data);
  if (version === seen) return;
  seen = version;
  void refresh();
});
events.addEventListener("error", () => live.classList.add("stale"));
