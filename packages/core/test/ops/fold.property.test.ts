import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { Graph } from "../../src/graph/graph.js";
import type { Layer } from "../../src/lang/layers.js";
import {
  type AuthorId,
  createOpIdGenerator,
  type DefId,
  defIdOf,
  type OpIdGenerator,
} from "../../src/ops/ids.js";
import type { Op, RefBindings, RefKey } from "../../src/ops/op.js";
import { applyPatch } from "../../src/ops/patch.js";
import { decomposeSource } from "../../src/ops/source.js";
import { dump, seededRandom } from "./builder.js";

const NAMES = ["a", "b", "c", "d"];
const ACTIONS = ["add", "add", "replace", "edit", "rename", "remove", "link", "unlink"] as const;
type Action = (typeof ACTIONS)[number];

/** A replica that writes ops against its own graph, as the store does, but without a parser. */
class FoldReplica {
  readonly g = Graph.empty();
  private readonly gen: OpIdGenerator;
  private t: number;

  constructor(
    readonly author: string,
    seed: number,
  ) {
    this.t = 1_700_000_000_000 + seed * 7;
    this.gen = createOpIdGenerator({ now: () => this.t, random: seededRandom(seed + 1) });
  }

  private visible(layer?: Layer) {
    return [...this.g.definitions()]
      .filter((s) => this.g.isVisible(s.def) && (layer === undefined || s.layer === layer))
      .sort((x, y) => (x.def < y.def ? -1 : 1));
  }

  private meta(kind: Op["op"], layer: Layer, name: string, def?: DefId) {
    this.t += 1 + (this.t % 3);
    const id = this.gen.next(this.g.maxOpId());
    return {
      op: kind,
      layer,
      name,
      author: this.author as AuthorId,
      ts: this.t,
      "op-id": id,
      "parent-ops": this.g.heads(),
      "depends-on": [] as string[],
      def: def ?? defIdOf(id),
    };
  }

  private text(layer: Layer, name: string, n: number): { source: string; refs: RefBindings } {
    if (layer === "slot") return { source: `slot ${name} : Int = ${n}`, refs: {} };
    const targets = this.visible().slice(n % 3, (n % 3) + 2);
    const refs: Record<string, DefId> = {};
    for (const t of targets) refs[`${t.layer}:${t.name}`] = t.def;
    const args = targets.map((t) => t.name).join(", ");
    return { source: `tile ${name} = column(${args}) # ${n}`, refs: refs as RefBindings };
  }

  /** Writes one op (when the action makes sense here) and takes it in. */
  act(action: Action, pick: number): Op | undefined {
    const op = this.write(action, pick);
    if (op !== undefined) this.g.receive([op]);
    return op;
  }

  private write(action: Action, pick: number): Op | undefined {
    const all = this.visible();
    const target = all.length === 0 ? undefined : all[pick % all.length]!;
    switch (action) {
      case "add": {
        const layer: Layer = pick % 2 === 0 ? "slot" : "tile";
        const name = NAMES[pick % NAMES.length]!;
        if (this.g.lookup(layer, name) !== undefined) return undefined;
        const { source, refs } = this.text(layer, name, pick);
        const parts = decomposeSource(source)!;
        return { ...this.meta("add", layer, name), op: "add", body: parts.body, refs };
      }
      case "replace": {
        if (target === undefined) return undefined;
        const { source, refs } = this.text(target.layer, target.name, pick + 1);
        return {
          ...this.meta("replace", target.layer, target.name, target.def),
          op: "replace",
          body: decomposeSource(source)!.body,
          refs,
        };
      }
      case "edit": {
        if (target === undefined) return undefined;
        const text = target.body.text;
        const anchors = [
          { find: "column(", replace: "row(" },
          { find: "row(", replace: "column(" },
          { find: `= ${pick % 10}`, replace: `= ${(pick + 3) % 10}` },
          { find: `# ${pick % 10}`, replace: `# ${(pick + 5) % 10}` },
        ].filter((a) => applyPatch(text, [a]).ok);
        const anchor = anchors[pick % Math.max(1, anchors.length)];
        if (anchor === undefined) return undefined;
        const r = applyPatch(text, [anchor]);
        if (!r.ok) return undefined;
        const parts = decomposeSource(r.text)!;
        return {
          ...this.meta("edit", target.layer, target.name, target.def),
          op: "edit",
          patch: [anchor],
          base: target.body.version,
          body: parts.body,
          ...(parts.head === undefined ? {} : { head: parts.head }),
          refs: target.body.refs,
        };
      }
      case "rename": {
        if (target === undefined) return undefined;
        const name = NAMES[(pick >> 2) % NAMES.length]!;
        if (name === target.name || this.g.lookup(target.layer, name) !== undefined) return undefined;
        return {
          ...this.meta("rename", target.layer, target.name, target.def),
          op: "rename",
          "new-name": name,
        };
      }
      case "remove": {
        if (target === undefined || this.g.referrersOf(target.def).length > 0) return undefined;
        return { ...this.meta("remove", target.layer, target.name, target.def), op: "remove" };
      }
      case "link": {
        const keys = all.flatMap((s) => Object.keys(s.body.refs).map((k) => ({ s, k: k as RefKey })));
        const chosen = keys[pick % Math.max(1, keys.length)];
        if (chosen === undefined) return undefined;
        const layer = chosen.k.split(":")[0] as Layer;
        const candidates = this.visible(layer);
        const to = candidates[(pick >> 1) % Math.max(1, candidates.length)];
        if (to === undefined) return undefined;
        return {
          ...this.meta("link", chosen.s.layer, chosen.s.name, chosen.s.def),
          op: "link",
          ref: chosen.k,
          target: to.def,
        };
      }
      case "unlink": {
        const keys = all.flatMap((s) => Object.keys(s.body.refs).map((k) => ({ s, k: k as RefKey })));
        const chosen = keys[pick % Math.max(1, keys.length)];
        if (chosen === undefined) return undefined;
        return {
          ...this.meta("unlink", chosen.s.layer, chosen.s.name, chosen.s.def),
          op: "unlink",
          ref: chosen.k,
        };
      }
    }
  }
}

type Step =
  | { kind: "act"; replica: number; action: Action; pick: number }
  | { kind: "sync"; from: number; to: number; keep: number; seed: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("act" as const),
      replica: fc.nat(),
      action: fc.constantFrom(...ACTIONS),
      pick: fc.nat(1000),
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant("sync" as const),
      from: fc.nat(),
      to: fc.nat(),
      keep: fc.nat(100),
      seed: fc.nat(),
    }),
  },
);

function shuffle<T>(xs: T[], seed: number): T[] {
  const out = [...xs];
  let x = seed + 1;
  for (let i = out.length - 1; i > 0; i--) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    const j = x % (i + 1);
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** Runs a script over `n` replicas; returns them and every op written. */
function run(n: number, script: readonly Step[]) {
  const replicas = Array.from({ length: n }, (_, i) => new FoldReplica(`agent:r${i}`, i * 1000 + 17));
  const written: Op[] = [];
  for (const s of script) {
    if (s.kind === "act") {
      const op = replicas[s.replica % n]!.act(s.action, s.pick);
      if (op !== undefined) written.push(op);
    } else {
      const from = replicas[s.from % n]!;
      const to = replicas[s.to % n]!;
      // A partial, shuffled delivery with duplicates: parents may be missing (the ops wait).
      const ops = [...from.g.ops()];
      const batch = shuffle(ops, s.seed).slice(0, Math.ceil((ops.length * s.keep) / 100));
      to.g.receive([...batch, ...batch.slice(0, 2)]);
    }
  }
  return { replicas, written };
}

describe("the fold", () => {
  it("replicas that exchange all their ops end with identical graphs, equal to the fold of the op set", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 3, max: 5 }),
        fc.array(step, { minLength: 5, maxLength: 60 }),
        fc.nat(),
        (n, script, seed) => {
          const { replicas, written } = run(n, script);
          // Full exchange, in a different random order for each replica, in several batches.
          replicas.forEach((r, i) => {
            const ops = shuffle(written, seed + i);
            const cut = Math.floor(ops.length / 2);
            r.g.receive(ops.slice(0, cut));
            r.g.receive(ops.slice(cut));
          });
          const expected = dump(Graph.fold(written));
          for (const r of replicas) expect(dump(r.g)).toEqual(expected);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("is independent of the order of the ops: fold(permutation(ops)) is the same graph", () => {
    fc.assert(
      fc.property(
        fc.array(step, { minLength: 5, maxLength: 50 }),
        fc.array(fc.nat(), { minLength: 3, maxLength: 3 }),
        (script, seeds) => {
          const { written } = run(3, script);
          const expected = dump(Graph.fold(written));
          for (const s of seeds) {
            expect(dump(Graph.fold(shuffle(written, s)))).toEqual(expected);
            // One op at a time, in that order: the incremental path gives the same graph as a re-fold.
            const g = Graph.empty();
            for (const op of shuffle(written, s + 1)) g.receive([op]);
            expect(dump(g)).toEqual(expected);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it("the scripts reach every op kind and real conflicts", () => {
    // Guards the two properties above against vacuity: the generated histories are not trivial.
    const kinds = new Set<string>();
    const conflictKinds = new Set<string>();
    fc.assert(
      fc.property(fc.array(step, { minLength: 30, maxLength: 60 }), (script) => {
        const { written } = run(3, script);
        for (const o of written) kinds.add(o.op);
        for (const c of Graph.fold(written).conflicts()) conflictKinds.add(c.kind);
      }),
      { numRuns: 200 },
    );
    expect([...kinds].sort()).toEqual(["add", "edit", "link", "remove", "rename", "replace", "unlink"]);
    for (const k of ["name-taken", "replace-lost", "rolled-back", "remove-overridden"])
      expect(conflictKinds).toContain(k);
  });
});
