import type { Graph } from "../../src/graph/graph.js";
import type { Layer } from "../../src/lang/layers.js";
import { type AuthorId, createOpIdGenerator, type DefId, defIdOf, type OpId } from "../../src/ops/ids.js";
import type { Anchor, EditOp, Op, RefBindings, RefKey } from "../../src/ops/op.js";
import { decomposeSource } from "../../src/ops/source.js";

/** A deterministic random source for op-ids. */
export function seededRandom(seed: number): (bytes: Uint8Array) => void {
  let x = seed >>> 0 || 1;
  return (bytes) => {
    for (let i = 0; i < bytes.length; i++) {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      bytes[i] = x & 0xff;
    }
  };
}

/**
 * Writes ops by hand, without a store or a parser: each call says which ops it was written after
 * (`after`), so tests can build exactly the concurrency they mean. Op-ids increase call by call.
 */
export class OpBuilder {
  private t = 1_779_884_546_000;
  private readonly gen = createOpIdGenerator({ now: () => this.t, random: seededRandom(7) });

  /** The ts the next op gets; `tick` moves it. */
  tick(ms = 1): this {
    this.t += ms;
    return this;
  }

  private base(
    op: Op["op"],
    layer: Layer,
    name: string,
    def: DefId | undefined,
    after: readonly Op[],
    author: string,
    ts?: number,
  ) {
    const id = this.gen.next();
    this.t += 1;
    return {
      op,
      layer,
      name,
      author: author as AuthorId,
      ts: ts ?? this.t,
      "op-id": id,
      "parent-ops": after.map((o) => o["op-id"]),
      "depends-on": [] as string[],
      def: def ?? defIdOf(id),
    };
  }

  add(
    source: string,
    opts: { after?: readonly Op[]; refs?: Record<string, DefId>; author?: string; ts?: number } = {},
  ): Op & { op: "add" } {
    const parts = decomposeSource(source);
    if (parts === undefined) throw new Error(`not a definition: ${source}`);
    const b = this.base(
      "add",
      parts.layer,
      parts.name,
      undefined,
      opts.after ?? [],
      opts.author ?? "agent:a",
      opts.ts,
    );
    return {
      ...b,
      op: "add",
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: (opts.refs ?? {}) as RefBindings,
    };
  }

  replace(
    target: Op,
    source: string,
    opts: {
      after: readonly Op[];
      refs?: Record<string, DefId>;
      author?: string;
      ts?: number;
      reverts?: OpId;
    },
  ): Op {
    const parts = decomposeSource(source)!;
    const b = this.base(
      "replace",
      target.layer,
      parts.name,
      target.def,
      opts.after,
      opts.author ?? "agent:a",
      opts.ts,
    );
    return {
      ...b,
      op: "replace",
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: (opts.refs ?? {}) as RefBindings,
      ...(opts.reverts === undefined ? {} : { reverts: opts.reverts }),
    };
  }

  edit(
    target: Op,
    patch: readonly Anchor[],
    result: string,
    opts: { after: readonly Op[]; base: Op; refs?: Record<string, DefId>; author?: string; ts?: number },
  ): EditOp {
    const parts = decomposeSource(result)!;
    const b = this.base(
      "edit",
      target.layer,
      parts.name,
      target.def,
      opts.after,
      opts.author ?? "agent:a",
      opts.ts,
    );
    return {
      ...b,
      op: "edit",
      patch,
      base: opts.base["op-id"],
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: (opts.refs ?? {}) as RefBindings,
    };
  }

  rename(
    target: Op,
    name: string,
    newName: string,
    opts: { after: readonly Op[]; author?: string; ts?: number },
  ): Op {
    return {
      ...this.base("rename", target.layer, name, target.def, opts.after, opts.author ?? "agent:a", opts.ts),
      op: "rename",
      "new-name": newName,
    };
  }

  remove(target: Op, name: string, opts: { after: readonly Op[]; author?: string; ts?: number }): Op {
    return {
      ...this.base("remove", target.layer, name, target.def, opts.after, opts.author ?? "agent:a", opts.ts),
      op: "remove",
    };
  }

  link(
    target: Op,
    name: string,
    ref: string,
    to: DefId,
    opts: { after: readonly Op[]; author?: string },
  ): Op {
    return {
      ...this.base("link", target.layer, name, target.def, opts.after, opts.author ?? "agent:a"),
      op: "link",
      ref: ref as RefKey,
      target: to,
    };
  }

  unlink(target: Op, name: string, ref: string, opts: { after: readonly Op[]; author?: string }): Op {
    return {
      ...this.base("unlink", target.layer, name, target.def, opts.after, opts.author ?? "agent:a"),
      op: "unlink",
      ref: ref as RefKey,
    };
  }
}

/** Everything observable about a graph, canonically ordered: equal dumps mean equal graphs. */
export function dump(g: Graph): unknown {
  const defs = [...g.definitions()]
    .sort((a, b) => (a.def < b.def ? -1 : 1))
    .map((s) => ({
      id: s.def,
      layer: s.layer,
      name: s.name,
      alive: s.alive,
      visible: g.isVisible(s.def),
      text: s.body.text,
      refs: Object.entries(s.body.refs).sort(),
      version: s.body.version,
    }));
  return { defs, conflicts: g.conflicts(), heads: g.heads(), status: g.status() };
}

/** The live definition shown under `layer.name`, with its text. */
export function shown(g: Graph, layer: Layer, name: string): { id: DefId; text: string } | undefined {
  const id = g.lookup(layer, name);
  if (id === undefined) return undefined;
  return { id, text: g.definition(id)!.body.text };
}
