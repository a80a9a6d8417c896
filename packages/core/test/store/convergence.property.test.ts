import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import { checkStore } from "../../src/integrity/store-check.js";
import type { LogOp, Op } from "../../src/ops/op.js";
import { MemoryOpLog } from "../../src/store/memory-op-log.js";
import type { Store } from "../../src/store/store.js";
import { seededRandom } from "../ops/builder.js";
import { shuffle } from "../ops/fold-scripts.js";

// "Mode" is capitalized: in a value it is a variant unless bound, so unlinking it is a valid write.
const SLOTS = ["a", "b", "Mode"];
const TILES = ["A", "B", "C"];
const FNS = ["f", "g"];
const POLICIES = ["strict", "heal", "warn"];

interface Replica {
  readonly store: Store;
  readonly log: MemoryOpLog;
}

function replicas(n: number, skew: readonly number[]): Replica[] {
  return Array.from({ length: n }, (_, i) => {
    const log = new MemoryOpLog();
    let t = 1_779_884_546_000 + (skew[i] ?? 0);
    const r = openStore({ log, author: `agent:r${i}`, now: () => (t += 3), random: seededRandom(i + 11) });
    if (!r.ok) throw new Error(r.error.message);
    return { store: r.value, log };
  });
}

/** Waits until the replica has taken in everything delivered to it (its calls run in order). */
async function settled(r: Replica): Promise<void> {
  await r.store.ingest([]);
}

function pick<T>(xs: readonly T[], n: number): T | undefined {
  return xs.length === 0 ? undefined : xs[n % xs.length];
}

/** Accepted writes by kind, across all runs (to show the histories are not trivial). */
const accepted = new Map<string, number>();

async function count(p: Promise<{ ok: boolean; value?: { ops: readonly LogOp[] } }>): Promise<void> {
  const r = await p;
  if (r.ok) for (const o of r.value?.ops ?? []) accepted.set(o.op, (accepted.get(o.op) ?? 0) + 1);
}

/** One random write through the store API; refusals are part of the game. */
async function act(r: Replica, kind: number, n: number): Promise<void> {
  const s = r.store;
  const list = s.list();
  if (!list.ok) throw new Error(list.error.message);
  const defs = list.value;
  const slots = defs.filter((d) => d.layer === "slot");
  const tiles = defs.filter((d) => d.layer === "tile");
  const fns = defs.filter((d) => d.layer === "fn");
  const any = pick(defs, n);
  switch (kind % 13 === 12 ? 12 : kind % 12) {
    case 0: {
      const slot = pick(slots, n >> 3);
      const child = pick(tiles, n >> 5);
      const body = `column(${[slot === undefined ? 'text("-")' : `text(${slot.name}.show)`, ...(child === undefined ? [] : [child.name])].join(", ")})`;
      await count(s.add({ layer: "tile", name: pick(TILES, n)!, body }));
      return;
    }
    case 1: {
      await count(s.add({ layer: "slot", name: pick(SLOTS, n)!, body: `Int = ${n % 10}` }));
      return;
    }
    case 2: {
      const other = pick(fns, n >> 4);
      const body =
        other === undefined
          ? `(x: Int) -> Int = x + ${n % 10}`
          : `(x: Int) -> Int = ${other.name}(x) + ${n % 10}`;
      await count(s.add({ layer: "fn", name: pick(FNS, n)!, body }));
      return;
    }
    case 3: {
      if (any === undefined) return;
      const slot = pick(slots, n >> 5);
      const body =
        any.layer === "slot"
          ? `Int = ${(n >> 2) % 10}`
          : any.layer === "fn"
            ? `(x: Int) -> Int = x * ${(n >> 2) % 10}`
            : `row(text("${n % 7}")${slot === undefined ? "" : `, text(${slot.name}.show)`})`;
      await count(s.replace({ qname: any.qname, body }));
      return;
    }
    case 4: {
      if (any === undefined) return;
      const t = s.view(any.qname);
      if (!t.ok) return;
      const text = t.value.definitions[0]!.text;
      const m = text.match(/\d+/) ?? text.match(/column\(|row\(/);
      if (m === null) return;
      const replace = /\d/.test(m[0])
        ? String((Number(m[0]) + 1 + (n % 5)) % 10)
        : m[0] === "row("
          ? "column("
          : "row(";
      await count(s.edit({ qname: any.qname, patch: [{ find: m[0], replace }] }));
      return;
    }
    case 5: {
      if (any === undefined) return;
      const pool = any.layer === "slot" ? SLOTS : any.layer === "tile" ? TILES : FNS;
      await count(s.rename({ qname: any.qname, newName: pick(pool, n >> 2)! }));
      return;
    }
    case 6: {
      if (any === undefined) return;
      await count(s.remove({ qname: any.qname }));
      return;
    }
    case 7:
    case 9: {
      const withSlots = tiles.filter((t) =>
        (s.read().sites(t.def) ?? []).some((x) => x.key.startsWith("slot:") && x.target !== null),
      );
      const tile = pick(withSlots, n);
      if (tile === undefined) return;
      const shown =
        s
          .read()
          .sites(tile.def)
          ?.filter((x) => x.key.startsWith("slot:") && x.target !== null) ?? [];
      const from = pick(shown, n >> 4);
      if (from === undefined) return;
      const to = pick(
        slots.filter((x) => x.def !== from.target),
        n >> 2,
      );
      if ((n & 1) === 0 && to !== undefined)
        await count(s.link({ qname: tile.qname, ref: `slot:${from.shown}`, to: to.qname }));
      else await count(s.unlink({ qname: tile.qname, ref: `slot:${from.shown}` }));
      return;
    }
    case 8: {
      const ops = r.log.all() as Op[];
      const target = pick(ops, n);
      if (target !== undefined) await count(s.revert(target["op-id"]));
      return;
    }
    case 10: {
      // The conflict policy is graph state: replicas change it concurrently with everything else.
      await count(s.setConflictPolicy(pick(POLICIES, n)!));
      return;
    }
    case 11: {
      // Locks held by agents that never write here: they gate nothing, but are replicated state
      // (lifted by force: they are not the writer's own).
      const agent = `agent:x${(n >> 3) % 2}`;
      const pattern = pick(["fn.*", "slot.Mode", "tile.C*"], n >> 2)!;
      if ((n & 1) === 0) await count(s.lock({ agent, patterns: [pattern] }));
      else await count(s.unlock({ agent, force: true, ...((n & 2) === 0 ? {} : { patterns: [pattern] }) }));
      return;
    }
    case 12: {
      // A faithful import (keepErrors): a reference to a name nothing defines (stored unbound), a
      // text that does not parse, and a name added twice, in one bundle; replicas must agree on
      // what binds, what shows and what check says, in every order.
      const name = pick(TILES, n)!;
      const missing = pick(["zz", "qq"], n >> 2)!;
      const r = await s.apply(
        [
          { op: "add", source: `tile ${name} = column(text(${missing}.show))\n` },
          { op: "add", source: `fn ${pick(FNS, n >> 3)!}(x: Int) -> Int = (x + ${n % 10}\n` },
          { op: "add", source: `tile ${name} = row(text("${n % 7}"))\n` },
        ],
        { keepErrors: true },
      );
      if (r.ok) accepted.set("faithful import", (accepted.get("faithful import") ?? 0) + 1);
      return;
    }
  }
}

/** Everything a replica shows: its program text, every live definition's hash, its conflicts. */
function observe(s: Store): unknown {
  const reader = s.read();
  const defs = reader.definitions();
  return {
    program: reader.program(),
    list: s.list(),
    hashes: defs.map((d) => [d.def, d.qname, d.visible, reader.hash(d.def)]),
    conflicts: s.conflicts(),
    policy: s.conflictPolicy(),
    locks: s.locks(),
    heads: s.status().heads,
    pending: s.status().pending,
    check: checkStore(s, { requireApp: false }).diagnostics,
  };
}

const step = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.record({
      kind: fc.constant("act" as const),
      replica: fc.nat(),
      op: fc.nat(),
      n: fc.nat(1 << 12),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("sync" as const),
      from: fc.nat(),
      to: fc.nat(),
      keep: fc.integer({ min: 0, max: 100 }),
      seed: fc.nat(),
    }),
  },
);

describe("convergence", () => {
  it("replicas writing concurrently, exchanging ops in any order with partitions and duplicates, end identical", async () => {
    const kinds = new Set<string>();
    const conflictKinds = new Set<string>();
    const decidedBy = new Set<string>();
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 3, max: 5 }),
        fc.array(fc.integer({ min: -5_000, max: 5_000 }), { minLength: 5, maxLength: 5 }),
        fc.array(step, { minLength: 20, maxLength: 60 }),
        fc.nat(),
        async (n, skew, script, seed) => {
          const rs = replicas(n, skew);
          // A common start, written by one replica and known to all.
          const seedOps = await rs[0]!.store.apply([
            { op: "add", layer: "slot", name: "a", body: "Int = 1" },
            { op: "add", layer: "slot", name: "Mode", body: "Int = 2" },
            { op: "add", layer: "fn", name: "f", body: "(x: Int) -> Int = x + 1" },
            { op: "add", layer: "tile", name: "A", body: "column(text(a.show), text(Mode.show))" },
          ]);
          if (!seedOps.ok) throw new Error(seedOps.error.message);
          for (const r of rs.slice(1)) {
            r.log.receive(rs[0]!.log.all());
            await settled(r);
          }
          for (const s of script) {
            if (s.kind === "act") {
              await act(rs[s.replica % n]!, s.op, s.n);
            } else {
              // A partial, shuffled delivery, with duplicates: some ops arrive before their parents.
              const from = rs[s.from % n]!;
              const to = rs[s.to % n]!;
              const ops = shuffle(from.log.all(), s.seed);
              const part = ops.slice(0, Math.ceil((ops.length * s.keep) / 100));
              to.log.receive([...part, ...part.slice(0, 3)]);
              await settled(to);
            }
          }
          // Heal the partitions: everyone gets everything, each in its own order, in two rounds.
          const all = rs.flatMap((r) => r.log.all());
          for (const [i, r] of rs.entries()) {
            const mine = shuffle(all, seed + i);
            r.log.receive(mine.slice(0, mine.length >> 1));
            r.log.receive(mine.slice(mine.length >> 1));
          }
          for (const r of rs) await settled(r);
          const expected = observe(rs[0]!.store);
          for (const r of rs.slice(1)) expect(observe(r.store)).toEqual(expected);
          // A store opened over the same ops, in yet another order, shows the same.
          const fresh = new MemoryOpLog(shuffle(all, seed + 99));
          const opened = openStore({ log: fresh, author: "agent:late" });
          if (!opened.ok) throw new Error(opened.error.message);
          expect(observe(opened.value)).toEqual(expected);
          for (const o of all as Op[]) kinds.add(o.op);
          for (const c of rs[0]!.store.conflicts()) {
            conflictKinds.add(c.kind);
            if (c.policy !== undefined) decidedBy.add(`${c.kind}:${c.policy}`);
          }
        },
      ),
      // A fixed seed by default: the coverage assertions below are about the generated histories,
      // and an unlucky random draw (2 unlocks in 60 runs) once failed CI with nothing wrong. Set
      // KUMIKI_PROPERTY_SEED to explore other histories.
      { numRuns: 60, seed: Number(process.env.KUMIKI_PROPERTY_SEED ?? 20261202) },
    );
    // The histories were not trivial: every op kind was written, and real conflicts arose.
    const all = ["add", "config", "edit", "link", "lock", "remove", "rename", "replace", "unlink", "unlock"];
    expect([...kinds].sort()).toEqual(all);
    for (const k of [...all, "faithful import"]) expect(accepted.get(k), k).toBeGreaterThan(2);
    // Dangling references were decided under each policy: strict and heal roll back, warn keeps.
    for (const d of ["rolled-back:strict", "rolled-back:heal", "dangling:warn"])
      expect(decidedBy, d).toContain(d);
    for (const k of ["name-taken", "replace-lost", "edit-rebase-failed", "remove-overridden", "rolled-back"])
      expect(conflictKinds, k).toContain(k);
  }, 240_000);
});
