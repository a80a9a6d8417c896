/**
 * Random multi-replica histories for the fold's property tests: replicas that write ops against
 * their own graphs, as the store does but without a parser, and exchange partial, shuffled batches.
 */
import fc from "fast-check";
import { Graph } from "../../src/graph/graph.js";
import type { Layer } from "../../src/lang/layers.js";
import {
  type AuthorId,
  createOpIdGenerator,
  type DefId,
  defIdOf,
  type OpIdGenerator,
} from "../../src/ops/ids.js";
import type { LogOp, Op, RefBindings, RefKey } from "../../src/ops/op.js";
import { applyPatch } from "../../src/ops/patch.js";
import { decomposeSource } from "../../src/ops/source.js";
import { seededRandom } from "./builder.js";

export const NAMES = ["a", "b", "c", "d"];
/** The definition ops a script writes, `add` twice as likely. */
export const ACTIONS = ["add", "add", "replace", "edit", "rename", "remove", "link", "unlink"] as const;
/**
 * Besides those: `fresh` adds a definition under a name no replica uses yet (referencing visible
 * ones, for a tile), `lock` locks the replica's own layer, `policy` sets the conflict policy.
 */
export type Action = (typeof ACTIONS)[number] | "fresh" | "lock" | "policy";

/** A replica that writes ops against its own graph, as the store does, but without a parser. */
export class FoldReplica {
  readonly g = Graph.empty();
  private readonly gen: OpIdGenerator;
  private t: number;
  private fresh = 0;

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
  act(action: Action, pick: number): LogOp | undefined {
    const op = this.write(action, pick);
    if (op !== undefined) this.g.receive([op]);
    return op;
  }

  private write(action: Action, pick: number): LogOp | undefined {
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
      case "fresh": {
        const layer: Layer = pick % 2 === 0 ? "slot" : "tile";
        const name = `${layer === "slot" ? "s" : "t"}${this.author.slice(-2)}n${this.fresh++}`;
        const { source, refs } = this.text(layer, name, pick);
        return { ...this.meta("add", layer, name), op: "add", body: decomposeSource(source)!.body, refs };
      }
      case "lock": {
        this.t += 1;
        return {
          op: "lock",
          agent: this.author as AuthorId,
          patterns: [pick % 2 === 0 ? "slot.*" : "tile.*"],
          author: this.author as AuthorId,
          ts: this.t,
          "op-id": this.gen.next(this.g.maxOpId()),
          "parent-ops": this.g.heads(),
        };
      }
      case "policy": {
        this.t += 1;
        return {
          op: "config",
          key: "conflict-policy",
          value: (["strict", "heal", "warn"] as const)[pick % 3]!,
          author: this.author as AuthorId,
          ts: this.t,
          "op-id": this.gen.next(this.g.maxOpId()),
          "parent-ops": this.g.heads(),
        };
      }
    }
  }
}

export type Step =
  | { kind: "act"; replica: number; action: Action; pick: number }
  | { kind: "sync"; from: number; to: number; keep: number; seed: number };

/** A step of a script: a replica acts, or one replica sends part of its ops to another. */
export function stepOf(actions: readonly Action[]): fc.Arbitrary<Step> {
  return fc.oneof(
    {
      weight: 3,
      arbitrary: fc.record({
        kind: fc.constant("act" as const),
        replica: fc.nat(),
        action: fc.constantFrom(...actions),
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
}

/** A deterministic shuffle (the same order for the same seed). */
export function shuffle<T>(xs: readonly T[], seed: number): T[] {
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
export function run(n: number, script: readonly Step[]) {
  const replicas = Array.from({ length: n }, (_, i) => new FoldReplica(`agent:r${i}`, i * 1000 + 17));
  const written: LogOp[] = [];
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
