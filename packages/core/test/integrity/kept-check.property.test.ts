import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { FoldSnapshot } from "../../src/graph/fold-snapshot.js";
import { Graph } from "../../src/graph/graph.js";
import { graphAt } from "../../src/graph/past.js";
import type { CheckCache, KeptChecks } from "../../src/integrity/check-cache.js";
import { openStore } from "../../src/integrity/checked-store.js";
import { createCheckGate } from "../../src/integrity/gate.js";
import { headsKey, LiveCheck, type LiveCheckState } from "../../src/integrity/live.js";
import { keptCheckKey } from "../../src/integrity/shared-checks.js";
import { checkStore, keepCheck, liveCheckOf } from "../../src/integrity/store-check.js";
import type { LogOp } from "../../src/ops/op.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { Store } from "../../src/store/store.js";
import { COUNTER_PROGRAM, opsOf, seedMistake, storeOf } from "../check/store-support.js";
import { seededRandom } from "../ops/builder.js";

/** The counter program, with a slot nothing reads and a named timer. */
const PROGRAM = `${COUNTER_PROGRAM}slot spare : Int = 0
reducer tick on=timer(1s, name=beat)
    do= count := count + 1
`;

/** Another process's files, in memory: what it put, read back as JSON (as from the cache file). */
class MemoryKept implements KeptChecks {
  readonly states = new Map<string, string>();
  gets = 0;
  get(key: string): LiveCheckState | undefined {
    this.gets++;
    const s = this.states.get(key);
    return s === undefined ? undefined : (JSON.parse(s) as LiveCheckState);
  }
  put(key: string, state: LiveCheckState): void {
    this.states.set(key, JSON.stringify(state));
  }
  *entries(): Iterable<readonly [string, LiveCheckState]> {
    for (const [key, s] of this.states) yield [key, JSON.parse(s) as LiveCheckState];
  }
}

const noCache: CheckCache = { state: "memory", get: () => undefined, put: () => undefined };

type Write = (store: Store) => Promise<unknown>;

const writes: fc.Arbitrary<Write>[] = [
  fc.constantFrom("count", "total").map((to) => async (s: Store) => {
    const from = s.read().lookup("slot", "count") ?? s.read().lookup("slot", "total");
    return from === undefined || from.name === to ? undefined : s.rename({ qname: from.qname, newName: to });
  }),
  fc.constantFrom("IncBtn", "PlusBtn").map((to) => async (s: Store) => {
    const from = s.read().lookup("tile", "IncBtn") ?? s.read().lookup("tile", "PlusBtn");
    return from === undefined || from.name === to ? undefined : s.rename({ qname: from.qname, newName: to });
  }),
  // "1" and "true" are type errors the gate refuses; "ho" is a change it takes.
  fc
    .constantFrom('"hi"', '"ho"', "1", "true")
    .map((v) => (s: Store) => s.replace({ qname: "slot.label", body: `Text = ${v}` })),
  // A new type breaks its readers (count + 1 in inc and tick): refused, by what the readers read.
  fc.constantFrom("Int = 5", "Bool = true").map((body) => async (s: Store) => {
    const slot = s.read().lookup("slot", "count") ?? s.read().lookup("slot", "total");
    return slot === undefined ? undefined : s.replace({ qname: slot.qname, body });
  }),
  fc.constantFrom("a", "b").map((name) => (s: Store) => s.add({ layer: "slot", name, body: "Int = 2" })),
  fc.constantFrom("a", "b").map((name) => (s: Store) => s.remove({ qname: `slot.${name}` })),
  // A second timer of the same name: E0002, refused.
  fc.constantFrom("beat", "other").map(
    (timer) => (s: Store) =>
      s.add({
        layer: "reducer",
        name: `t${timer}`,
        body: `on=timer(2s, name=${timer})\n    do= count := 1`,
      }),
  ),
  fc.constant((s: Store) => s.remove({ qname: "tile.PickBtn" })),
  // A definition the resumed check holds unread, removed or renamed: its old name is what changed.
  fc.constantFrom("spare", "extra").map((name) => (s: Store) => s.remove({ qname: `slot.${name}` })),
  fc.constantFrom("spare", "extra").map((to) => async (s: Store) => {
    const from = s.read().lookup("slot", "spare") ?? s.read().lookup("slot", "extra");
    return from === undefined || from.name === to ? undefined : s.rename({ qname: from.qname, newName: to });
  }),
];

/** The graph's errors of a peer (what no gate refused): what the resumed check must carry over. */
const mistakes: fc.Arbitrary<(s: Store) => Promise<unknown>>[] = [
  fc
    .constantFrom("Actve", "Done")
    .map((v) => (s: Store) => seedMistake(s, "filter := Active", `filter := ${v}`)),
  fc.constant((s: Store) => seedMistake(s, "slot count : Int = 0", "slot count : Int = false")),
];

/**
 * What a peer without the checker's gate writes (the built-in gate only): errors no local gate
 * judged, arriving as remote ops — the resumed check then syncs without being told what changed.
 */
const peerWrites: fc.Arbitrary<(s: Store) => Promise<unknown>>[] = [
  // "12345" is as long as the stored `"hi"\n` it replaces: a change found by content, not length.
  fc
    .constantFrom('"peer"', "1", "12345")
    .map((v) => (s: Store) => s.replace({ qname: "slot.label", body: `Text = ${v}` })),
  // A reference bound to another target (the stored text stays, its bindings change): `count :=
  // Active` is an error.
  fc
    .constantFrom("count", "filter")
    .map((to) => (s: Store) => s.link({ qname: "reducer.pick", ref: "slot:filter", to: `slot.${to}` })),
  fc.constantFrom("spare", "extra", "other").map((to) => async (s: Store) => {
    const from =
      s.read().lookup("slot", "spare") ??
      s.read().lookup("slot", "extra") ??
      s.read().lookup("slot", "other");
    return from === undefined || from.name === to ? undefined : s.rename({ qname: from.qname, newName: to });
  }),
  fc.constantFrom("Int = 7", "Bool = true").map((body) => async (s: Store) => {
    const slot = s.read().lookup("slot", "count") ?? s.read().lookup("slot", "total");
    return slot === undefined ? undefined : s.replace({ qname: slot.qname, body });
  }),
];

/** A step: a write through both stores, or a peer's write both take in. */
type Step = { readonly local: Write } | { readonly peer: (s: Store) => Promise<unknown> };

/**
 * A memory log that hands out the fold of the ops it started with as a fold snapshot taken up
 * again (through JSON text, as a workspace's quick write reads one): the store starts from that
 * graph, reading each definition only when something looks at it.
 */
class SnapshotSeededLog extends MemoryOpLog {
  private readonly snap: ReturnType<Graph["snapshot"]>;
  private readonly count: number;
  seeded = 0;

  constructor(ops: readonly LogOp[]) {
    super(ops);
    this.snap = Graph.fold(ops).snapshot();
    this.count = ops.length;
  }

  seed(): { snapshot: FoldSnapshot; count: number } | undefined {
    const snap = this.snap;
    if (snap === undefined) return undefined;
    this.seeded++;
    const head = JSON.parse(JSON.stringify(snap.head));
    return {
      snapshot: { head, rows: snap.rows.length, row: (i) => snap.rows[i]! },
      count: this.count,
    };
  }

  heldCount(): number {
    return this.all().length;
  }

  since(from: number): readonly LogOp[] {
    return this.all().slice(from) as LogOp[];
  }
}

/**
 * A store on `ops` as a new process opens one: its own graph (or, `seeded`, one taken up from a
 * fold snapshot of them), the gate reading `kept` or not.
 */
function reopen(ops: Parameters<typeof opsOf>[0], kept?: KeptChecks, seeded?: SnapshotSeededLog[]): Store {
  let t = 1_790_000_000_000;
  const log =
    seeded === undefined ? new MemoryOpLog(opsOf(ops)) : new SnapshotSeededLog(opsOf(ops) as LogOp[]);
  if (log instanceof SnapshotSeededLog) seeded?.push(log);
  const opened = openStore({
    log,
    author: "agent:test",
    now: () => t++,
    random: seededRandom(7),
    validators: [createCheckGate(kept === undefined ? {} : { kept })],
  });
  if (!opened.ok) throw new Error(opened.error.message);
  return opened.value;
}

describe("a check kept by one process and resumed by another", () => {
  it("gates every write as a full check would, and its check after equals a full check, peers' ops arriving between", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(...mistakes), { maxLength: 2 }),
        fc.array(
          fc.oneof(
            { weight: 3, arbitrary: fc.oneof(...writes).map((local): Step => ({ local })) },
            { weight: 1, arbitrary: fc.oneof(...peerWrites).map((peer): Step => ({ peer })) },
          ),
          { minLength: 1, maxLength: 6 },
        ),
        async (before, seq) => {
          const origin = await storeOf(PROGRAM);
          for (const m of before) await m(origin).catch(() => undefined);
          // The process that checked keeps its check for the state it leaves.
          checkStore(origin);
          const kept = new MemoryKept();
          expect(keepCheck(origin, {}, noCache, kept)).toBe(true);
          const resumed = reopen(origin, kept);
          const full = reopen(origin);
          // A third, as a quick write opens one: its graph taken up from a fold snapshot.
          const logs: SnapshotSeededLog[] = [];
          const restored = reopen(origin, kept, logs);
          const peer = openStore({
            log: new MemoryOpLog(opsOf(origin)),
            author: "agent:peer",
            validators: [],
          });
          if (!peer.ok) throw new Error(peer.error.message);
          let first = true;
          for (const step of seq) {
            if ("peer" in step) {
              await step.peer(peer.value);
              const ops = [...peer.value.read().graph.ops()];
              expect((await resumed.ingest(ops)).ok).toBe(true);
              expect((await full.ingest(ops)).ok).toBe(true);
              expect((await restored.ingest(ops)).ok).toBe(true);
              const fresh = new LiveCheck(resumed.read().graph, {}).diagnostics();
              expect(checkStore(resumed).diagnostics).toEqual(fresh);
              expect(checkStore(full).diagnostics).toEqual(fresh);
              expect(checkStore(restored).diagnostics).toEqual(fresh);
              // The graph moved past the kept state's heads: no later write goes on from it.
              first = false;
              continue;
            }
            const write = step.local;
            const [a, b, c] = [await write(resumed), await write(full), await write(restored)];
            expect(a).toEqual(b);
            expect(c).toEqual(a);
            // The first write that reaches the gate asks for the kept check (a write refused
            // before the gate does not; after the first, the check is this process's own): once
            // for the resumed store, once for the restored one.
            const r = a as { ok?: boolean; error?: { code?: string } } | undefined;
            if (first && (r?.ok === true || r?.error?.code === "validation-failed"))
              expect(kept.gets).toBe(2);
            first = false;
            const fresh = new LiveCheck(resumed.read().graph, {}).diagnostics();
            expect(checkStore(resumed).diagnostics).toEqual(fresh);
            expect(checkStore(full).diagnostics).toEqual(fresh);
            expect(checkStore(restored).diagnostics).toEqual(fresh);
            expect(restored.read().graph.status().definitions).toBe(
              resumed.read().graph.status().definitions,
            );
          }
          expect(logs[0]!.seeded).toBe(1);
        },
      ),
      { numRuns: 80 },
    );
  });

  it("goes on from a state the graph has moved past (peers' ops taken in unchecked) as a full check would", async () => {
    // Two peers without the checker's gate write concurrently, so names can be contested (who
    // shows changes without a claimant changing) and a write can break what another left.
    const peerSteps = fc.array(fc.oneof(...peerWrites, ...writes), { minLength: 1, maxLength: 4 });
    let wentOn = 0;
    let pastsCompared = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(...mistakes), { maxLength: 2 }),
        peerSteps,
        peerSteps,
        fc.oneof(...writes),
        async (before, first, second, write) => {
          const origin = await storeOf(PROGRAM);
          for (const m of before) await m(origin).catch(() => undefined);
          checkStore(origin);
          const kept = new MemoryKept();
          expect(keepCheck(origin, {}, noCache, kept)).toBe(true);
          const ops: LogOp[] = [];
          for (const [i, steps] of [first, second].entries()) {
            const peer = openStore({
              log: new MemoryOpLog(opsOf(origin)),
              author: `agent:peer${i}`,
              random: seededRandom(100 + i),
              validators: [],
            });
            if (!peer.ok) throw new Error(peer.error.message);
            for (const step of steps) await step(peer.value);
            ops.push(...peer.value.read().graph.ops());
          }
          // A third store as a quick write opens one (its graph taken up from a fold snapshot),
          // going on from its own copy of the kept state.
          const keptCopy = new MemoryKept();
          for (const [k, v] of kept.states) keptCopy.states.set(k, v);
          const [resumed, full] = [reopen(origin, kept), reopen(origin)];
          const seeded = reopen(origin, keptCopy, []);
          for (const s of [resumed, full, seeded]) expect((await s.ingest(ops)).ok).toBe(true);
          const fresh = new LiveCheck(resumed.read().graph, {}).diagnostics();
          // The past made by undoing the later ops and the past folded again give one catch-up:
          // the one compares only the undone definitions, the other walks every definition.
          const g = resumed.read().graph;
          const kept0 = JSON.parse([...kept.states.values()][0]!) as LiveCheckState;
          const [undone, folded] = [g.asOf(kept0.at.split(",")), graphAt(g, kept0.at.split(","))];
          if (kept0.at !== headsKey(g) && undone !== undefined && folded !== undefined) {
            const byUndoing = LiveCheck.resumeBehind(g, {}, kept0, undone);
            undone.discard();
            const byFolding = LiveCheck.resumeBehind(g, {}, kept0, folded);
            expect(byUndoing.diagnostics()).toEqual(fresh);
            expect(byFolding.diagnostics()).toEqual(fresh);
            expect(byUndoing.rechecked).toBe(byFolding.rechecked);
            pastsCompared++;
          } else undone?.discard();
          const seededCheck = liveCheckOf(seeded, {}, keptCopy);
          expect(seededCheck.resumed).toBe(true);
          expect(seededCheck.diagnostics()).toEqual(fresh);
          const check = liveCheckOf(resumed, {}, kept);
          // Every kept state was taken: of the graph's heads, or of heads it has moved past.
          expect(check.resumed).toBe(true);
          const [state] = [...kept.states.values()].map((v) => JSON.parse(v) as LiveCheckState);
          if (state!.at !== check.at) wentOn++;
          expect(check.diagnostics()).toEqual(fresh);
          expect(checkStore(resumed).diagnostics).toEqual(fresh);
          // The gate of the next write, on the check gone on from: as a fully checked store's.
          const [a, b, c] = [await write(resumed), await write(full), await write(seeded)];
          expect(a).toEqual(b);
          expect(c).toEqual(a);
          const after = new LiveCheck(resumed.read().graph, {}).diagnostics();
          expect(checkStore(resumed).diagnostics).toEqual(after);
          expect(checkStore(seeded).diagnostics).toEqual(after);
        },
      ),
      { numRuns: 80 },
    );
    expect(wentOn).toBeGreaterThan(40);
    expect(pastsCompared).toBeGreaterThan(20);
  });

  it("checks in full when the past would have to be folded again from many ops per definition", async () => {
    const behind = async (replaces: number, later: (peer: Store) => Promise<unknown>) => {
      const origin = await storeOf("slot a : Int = 0\nslot b : Int = 0\n");
      for (let i = 1; i <= replaces; i++) await origin.replace({ qname: "slot.a", body: `Int = ${i}` });
      checkStore(origin);
      const kept = new MemoryKept();
      expect(keepCheck(origin, {}, noCache, kept)).toBe(true);
      const store = reopen(origin, kept);
      const peer = reopen(origin);
      await later(peer);
      expect((await store.ingest([...peer.read().graph.ops()])).ok).toBe(true);
      const check = liveCheckOf(store, {}, kept);
      expect(check.diagnostics()).toEqual(new LiveCheck(store.read().graph, {}).diagnostics());
      return check.resumed;
    };
    const write = (peer: Store) => peer.replace({ qname: "slot.b", body: "Int = 9" });
    // A later op that changes what it targets only: the past is the graph with it undone
    // (Graph.asOf), however many ops the graph holds.
    expect(await behind(10, write)).toBe(true);
    expect(await behind(90, write)).toBe(true);
    // A later control op (a policy set): the past is folded again, up to 40 ops per definition
    // (2 definitions: 80 ops); past that, a full check.
    const policy = async (peer: Store) => {
      expect((await peer.setConflictPolicy("warn")).ok).toBe(true);
      return write(peer);
    };
    expect(await behind(10, policy)).toBe(true);
    expect(await behind(90, policy)).toBe(false);
  });

  it("goes on from a kept state without checking; a state of other heads or a damaged one is not taken", async () => {
    const origin = await storeOf(PROGRAM);
    await seedMistake(origin, "filter := Active", "filter := Actve");
    const kept = new MemoryKept();
    checkStore(origin);
    keepCheck(origin, {}, noCache, kept);
    const graph = reopen(origin).read().graph;
    const key = keptCheckKey(headsKey(graph), {});
    const state = kept.get(key)!;
    const resumed = LiveCheck.resume(graph, {}, state);
    expect(resumed.resumed).toBe(true);
    expect(resumed.rechecked).toBe(0);
    expect(resumed.diagnostics()).toEqual(new LiveCheck(graph, {}).diagnostics());
    expect(resumed.diagnostics().length).toBeGreaterThan(0);
    // The same state for other heads, a state with a definition missing, not a state at all.
    const damaged: unknown[] = [
      { ...state, at: "op_other" },
      { ...state, checker: { ...state.checker, defs: state.checker.defs.slice(1) } },
      { ...state, checker: { v: 1, defs: [{ id: "x", reads: 3 }] } },
      { v: 2 },
      null,
    ];
    for (const d of damaged) {
      const check = LiveCheck.resume(graph, {}, d as LiveCheckState);
      expect(check.resumed).toBe(false);
      expect(check.diagnostics()).toEqual(resumed.diagnostics());
    }
    // What a store's check goes on from: the kept state, found by the graph's heads.
    const store = reopen(origin);
    expect(liveCheckOf(store, {}, kept).resumed).toBe(true);
  });
});
