import { parseText } from "../../src/graph/materialize.js";
import { createStore } from "../../src/integrity/checked-store.js";
import { splitProgram } from "../../src/lang/split.js";
import { type AuthorId, createOpIdGenerator, type DefId, defIdOf } from "../../src/ops/ids.js";
import type { Op, RefBindings, RefKey } from "../../src/ops/op.js";
import { decomposeSource } from "../../src/ops/source.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { StoredOp } from "../../src/store/op-log.js";
import type { Store } from "../../src/store/store.js";
import type { StoreOptions } from "../../src/store/store-types.js";
import { seededRandom } from "../ops/builder.js";

/**
 * A small counter program (a type, three slots, two reducers, four tiles, an app) that checks
 * clean: what the store-level check, kept-check and live-view tests write to.
 */
export const COUNTER_PROGRAM = `type Filter = All | Active | Done
slot count : Int = 0
slot filter : Filter = All
slot label : Text = "hi"
reducer inc on=ui.click(IncBtn)
    do= count := count + 1
reducer pick on=ui.click(PickBtn)
    do= filter := Active
tile IncBtn = button(text="+", onClick=inc)
tile PickBtn = button(text="pick", onClick=pick)
tile Home = page(text(count.show), text(label), IncBtn, PickBtn)
tile NotFound = page(text("404"))
app Counter
    caps   = []
    routes = {"/" -> Home, "/404" -> NotFound}
    init   = []
`;

const logs = new WeakMap<Store, MemoryOpLog>();

/** A store over memory holding `source`'s definitions, imported as one bundle of adds. */
export async function storeOf(
  source: string,
  options: Partial<Pick<StoreOptions, "validators" | "author">> & { readonly log?: MemoryOpLog } = {},
): Promise<Store> {
  let t = 1_780_000_000_000;
  const log = options.log ?? new MemoryOpLog();
  const created = createStore({
    log,
    author: options.author ?? "agent:test",
    now: () => t++,
    random: seededRandom(11),
    ...(options.validators === undefined ? {} : { validators: options.validators }),
  });
  if (!created.ok) throw new Error(created.error.message);
  const store = created.value;
  logs.set(store, log);
  const items = addItemsOf(source);
  if (items.length > 0) {
    const r = await store.apply(items);
    if (!r.ok) throw new Error(`import refused: ${r.error.code}: ${r.error.message}`);
  }
  return store;
}

/** Every op the log of a store made by {@link storeOf} holds (a copy, to open another store on). */
export function opsOf(store: Store): readonly StoredOp[] {
  const log = logs.get(store);
  if (log === undefined) throw new Error("opsOf takes a store made by storeOf");
  return [...log.all()];
}

/** The add items of a program's definitions (what an import applies). */
export function addItemsOf(source: string): { op: "add"; source: string }[] {
  const pieces = splitProgram(source);
  if (!pieces.ok) throw new Error(`parse error: ${pieces.error.message}`);
  return pieces.value.flatMap((p) =>
    p.kind === "definition" ? [{ op: "add" as const, source: p.text }] : [],
  );
}

/**
 * A store over memory holding `source`'s definitions, arrived as a peer's ops (adds bound to what
 * is already there, then links for the references to later definitions), so that neither the write
 * gate nor the store's binding rules decide what the graph may hold: the graph is exactly the
 * program, mistakes included.
 */
export async function storeFromPeer(source: string): Promise<Store> {
  const store = await storeOf("");
  const log = logs.get(store)!;
  const pieces = splitProgram(source);
  if (!pieces.ok) throw new Error(`parse error: ${pieces.error.message}`);
  const ops: Op[] = [];
  const ids = new Map<string, DefId>();
  const later: { def: DefId; layer: Op["layer"]; name: string; key: string; to: string }[] = [];
  const base = () => {
    seedClock += 1;
    const id = seedIds.next(ops.at(-1)?.["op-id"]);
    return {
      author: "agent:peer" as AuthorId,
      ts: seedClock,
      "op-id": id,
      "parent-ops": ops.length === 0 ? [] : [ops.at(-1)!["op-id"]],
      "depends-on": [],
    };
  };
  const defs = pieces.value.flatMap((p) => (p.kind === "definition" ? [p] : []));
  for (const p of defs) {
    const parsed = parseText(p.text);
    if (!parsed.ok) throw new Error(parsed.error.message);
    const parts = decomposeSource(p.text)!;
    const b = base();
    const def = defIdOf(b["op-id"]);
    ids.set(`${p.layer}:${p.name}`, def);
    const names = new Set(defs.map((d) => `${d.layer}:${d.name}`));
    const refs: Record<string, DefId> = {};
    for (const site of parsed.sites) {
      const layer = site.layers.find((l) => names.has(`${l}:${site.name}`));
      if (layer === undefined) continue;
      const key = `${layer}:${site.name}`;
      const known = ids.get(key);
      if (known !== undefined) refs[key] = known;
      else later.push({ def, layer: p.layer, name: p.name, key, to: key });
    }
    ops.push({
      ...b,
      op: "add",
      layer: p.layer,
      name: p.name,
      def,
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: refs as RefBindings,
    });
  }
  const linked = new Set<string>();
  for (const l of later) {
    if (linked.has(`${l.def}|${l.key}`)) continue;
    linked.add(`${l.def}|${l.key}`);
    ops.push({
      ...base(),
      op: "link",
      layer: l.layer,
      name: l.name,
      def: l.def,
      ref: l.key as RefKey,
      target: ids.get(l.to)!,
    });
  }
  log.receive(ops);
  await store.ingest([]);
  if (store.read().definitions().length !== defs.length)
    throw new Error(`the peer's ops did not all apply: ${JSON.stringify(store.status())}`);
  return store;
}

let seedClock = 1_790_000_000_000;
const seedIds = createOpIdGenerator({ now: () => seedClock, random: seededRandom(23) });

/**
 * Puts a mistake into the store the way a peer's op brings it (arriving through the op log, as
 * sync delivers it: neither the write gate nor ingest's checks see it): the definition whose shown text contains `find` gets `replace` instead, with
 * every reference that still names something bound to it, and the rest left unbound. Returns the
 * definition's qname.
 */
export async function seedMistake(
  store: Store,
  find: string,
  replace: string,
  within?: string,
): Promise<string> {
  const reader = store.read();
  const all = reader.definitions().filter((d) => d.visible && d.text.includes(find));
  const named = all.filter((d) => d.qname === within);
  const holders = named.length > 0 ? named : all;
  if (holders.length !== 1) throw new Error(`${holders.length} definitions contain ${JSON.stringify(find)}`);
  const view = holders[0]!;
  const text = view.text.replace(find, replace);
  const parsed = parseText(text);
  if (!parsed.ok) throw new Error(`the seeded text does not parse: ${parsed.error.message}`);
  const refs: Record<string, DefId> = {};
  for (const site of parsed.sites) {
    for (const layer of site.layers) {
      const id =
        layer === view.layer && site.name === view.name ? view.def : reader.graph.lookup(layer, site.name);
      if (id !== undefined) {
        refs[`${layer}:${site.name}`] = id;
        break;
      }
    }
  }
  const parts = decomposeSource(text)!;
  seedClock += 1000;
  const op: Op = {
    op: "replace",
    layer: view.layer,
    name: view.name,
    author: "agent:peer" as AuthorId,
    ts: seedClock,
    "op-id": seedIds.next(reader.graph.maxOpId()),
    "parent-ops": reader.graph.heads(),
    "depends-on": [],
    def: view.def,
    body: parts.body,
    ...(parts.head === undefined ? {} : { head: parts.head }),
    refs: refs as RefBindings,
  };
  const log = logs.get(store);
  if (log === undefined) throw new Error("seedMistake takes a store made by storeOf");
  log.receive([op]);
  // Remote ops are folded in the store's write queue: an empty ingest waits for them.
  await store.ingest([]);
  if (store.read().get(view.def)?.text !== text)
    throw new Error(`the seeded op did not apply: ${JSON.stringify(store.status())}`);
  return view.qname;
}
