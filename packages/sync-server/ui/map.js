// The program as a map: a column per layer (in the language's order), references as edges, errors
// and warnings as colours. Hand-written rather than a layout library: a general layered layout is
// far beyond the 2 s first paint at 5,000 definitions (measured 2026-12-06 with @dagrejs/dagre
// 1.x in Node: 3.6 s at 500 nodes, 17 s at 1,000), and the ranks a layered layout would compute
// are the language's layers, which the map is given. Within a column, definitions are ordered by
// the mean row of what they reference (one sweep), which keeps most edges short; the renderer is a
// canvas (thousands of nodes and edges in one draw), with drag to pan and the wheel to zoom.

export const LAYERS = ["type", "slot", "effect", "reducer", "tile", "fn", "app", "test", "theme", "motion"];
const ROWS = 60; // rows per sub-column: a tall layer wraps into several
const W = 170;
const H = 16;
const GAP = 40;

/** Positions for `defs` (the overview's definitions): {x, y} per def id, and the columns' headers. */
export function layout(defs) {
  const byLayer = new Map(LAYERS.map((l) => [l, []]));
  for (const d of defs) (byLayer.get(d.layer) ?? byLayer.set(d.layer, []).get(d.layer)).push(d);
  const row = new Map();
  const pos = new Map();
  const headers = [];
  let x = 10;
  for (const [layer, list] of byLayer) {
    if (list.length === 0) continue;
    // Mean row of what each references among the layers placed so far; the rest keep name order.
    const key = (d) => {
      const rows = d.uses.map((u) => row.get(u)).filter((r) => r !== undefined);
      return rows.length === 0 ? Number.POSITIVE_INFINITY : rows.reduce((a, b) => a + b, 0) / rows.length;
    };
    const keyed = list.map((d) => ({ d, k: key(d) }));
    keyed.sort((a, b) => a.k - b.k || (a.d.name < b.d.name ? -1 : a.d.name > b.d.name ? 1 : 0));
    headers.push({ layer, x, count: list.length });
    keyed.forEach(({ d }, i) => {
      const col = Math.floor(i / ROWS);
      const r = i % ROWS;
      row.set(d.def, r);
      pos.set(d.def, { x: x + col * (W + 8), y: 30 + r * H });
    });
    x += Math.ceil(list.length / ROWS) * (W + 8) + GAP;
  }
  return { pos, headers, width: x, height: 30 + ROWS * H + 10 };
}

/** A canvas map of `overview`; `onPick(def)` is called on a click on a definition. */
export function drawMap(canvas, overview, onPick) {
  const defs = overview.definitions;
  const { pos, headers, width, height } = layout(defs);
  const byId = new Map(defs.map((d) => [d.def, d]));
  // The first paint fits the map in the canvas, down to the scale at which names still show.
  const fit = Math.max(0.55, Math.min(1, canvas.clientWidth / width, canvas.clientHeight / height));
  const view = canvas.__view ?? { x: 0, y: 0, k: fit };
  canvas.__view = view;
  let focus = canvas.__focus; // the def under the pointer or picked
  let marked = canvas.__marked ?? new Set();
  const ctx = canvas.getContext("2d");

  function paint() {
    const dpr = window.devicePixelRatio || 1;
    const w = canvas.clientWidth;
    const h = canvas.clientHeight;
    if (canvas.width !== w * dpr || canvas.height !== h * dpr) {
      canvas.width = w * dpr;
      canvas.height = h * dpr;
    }
    ctx.setTransform(dpr * view.k, 0, 0, dpr * view.k, dpr * view.x, dpr * view.y);
    ctx.clearRect(-view.x / view.k, -view.y / view.k, w / view.k, h / view.k);
    // Edges: every reference faint, the focused definition's strong.
    ctx.lineWidth = 1 / view.k;
    ctx.strokeStyle = "rgba(40,81,163,0.07)";
    ctx.beginPath();
    for (const d of defs) {
      const a = pos.get(d.def);
      for (const u of d.uses) {
        const b = pos.get(u);
        if (b === undefined) continue;
        ctx.moveTo(a.x, a.y + H / 2);
        ctx.lineTo(b.x + W, b.y + H / 2);
      }
    }
    ctx.stroke();
    if (focus !== undefined && byId.has(focus)) {
      ctx.strokeStyle = "rgba(40,81,163,0.9)";
      ctx.lineWidth = 2 / view.k;
      ctx.beginPath();
      const f = byId.get(focus);
      const a = pos.get(focus);
      for (const u of f.uses) {
        const b = pos.get(u);
        if (b !== undefined) {
          ctx.moveTo(a.x, a.y + H / 2);
          ctx.lineTo(b.x + W, b.y + H / 2);
        }
      }
      for (const d of defs) {
        if (!d.uses.includes(focus)) continue;
        const b = pos.get(d.def);
        ctx.moveTo(b.x, b.y + H / 2);
        ctx.lineTo(a.x + W, a.y + H / 2);
      }
      ctx.stroke();
    }
    ctx.font = "11px system-ui, sans-serif";
    ctx.textBaseline = "middle";
    for (const hd of headers) {
      ctx.fillStyle = "#1d2330";
      ctx.fillText(`${hd.layer} (${hd.count})`, hd.x, 14);
    }
    const labels = view.k >= 0.55;
    for (const d of defs) {
      const p = pos.get(d.def);
      ctx.fillStyle = d.errors > 0 ? "#fbe3e3" : d.warnings > 0 ? "#fcf0d8" : "#eef2fa";
      if (marked.has(d.def)) ctx.fillStyle = "#ffe66b";
      ctx.fillRect(p.x, p.y + 1, W, H - 2);
      ctx.strokeStyle =
        d.errors > 0 ? "#c62828" : d.warnings > 0 ? "#b7791f" : d.def === focus ? "#2851a3" : "#c9d1e3";
      ctx.lineWidth = (d.errors > 0 || d.def === focus ? 2 : 1) / view.k;
      ctx.strokeRect(p.x, p.y + 1, W, H - 2);
      if (labels) {
        ctx.fillStyle = d.visible ? "#1d2330" : "#6b7385";
        const tag = d.errors > 0 ? ` ✖${d.errors}` : d.warnings > 0 ? ` ⚠${d.warnings}` : "";
        ctx.fillText(`${d.name}${tag}`.slice(0, 26), p.x + 4, p.y + H / 2);
      }
    }
  }

  const at = (ev) => {
    const r = canvas.getBoundingClientRect();
    const x = (ev.clientX - r.left - view.x) / view.k;
    const y = (ev.clientY - r.top - view.y) / view.k;
    for (const d of defs) {
      const p = pos.get(d.def);
      if (x >= p.x && x <= p.x + W && y >= p.y && y <= p.y + H) return d.def;
    }
    return undefined;
  };
  if (!canvas.__wired) {
    canvas.__wired = true;
    let drag;
    canvas.addEventListener("pointerdown", (ev) => {
      drag = { x: ev.clientX, y: ev.clientY, vx: view.x, vy: view.y, moved: false };
    });
    canvas.addEventListener("pointermove", (ev) => {
      if (drag !== undefined) {
        view.x = drag.vx + ev.clientX - drag.x;
        view.y = drag.vy + ev.clientY - drag.y;
        drag.moved ||= Math.abs(ev.clientX - drag.x) + Math.abs(ev.clientY - drag.y) > 3;
        canvas.__paint();
        return;
      }
      const hit = at(ev);
      if (hit !== canvas.__focus) {
        canvas.__focus = hit;
        canvas.__paint();
      }
    });
    canvas.addEventListener("pointerup", (ev) => {
      const click = drag !== undefined && !drag.moved;
      drag = undefined;
      if (click) {
        const hit = at(ev);
        if (hit !== undefined) canvas.__pick(hit);
      }
    });
    canvas.addEventListener(
      "wheel",
      (ev) => {
        ev.preventDefault();
        const r = canvas.getBoundingClientRect();
        const k = Math.min(3, Math.max(0.1, view.k * (ev.deltaY < 0 ? 1.15 : 1 / 1.15)));
        const mx = ev.clientX - r.left;
        const my = ev.clientY - r.top;
        view.x = mx - ((mx - view.x) * k) / view.k;
        view.y = my - ((my - view.y) * k) / view.k;
        view.k = k;
        canvas.__paint();
      },
      { passive: false },
    );
  }
  canvas.__pick = onPick;
  canvas.__paint = () => {
    focus = canvas.__focus;
    marked = canvas.__marked ?? new Set();
    paint();
  };
  canvas.__paint();
  return { pos };
}
