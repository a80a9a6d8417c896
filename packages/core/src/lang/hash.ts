import { blake3 } from "@noble/hashes/blake3.js";
import { bytesToHex, utf8ToBytes } from "@noble/hashes/utils.js";
import { z } from "zod";
import type { Definition } from "./ast.js";
import { canonicalStructure } from "./canonical.js";
import type { ReferenceSite } from "./references.js";

/** A definition's content hash: `h:` and 64 lower-case hex digits of blake3. */
export type ContentHash = string & { readonly __brand: "ContentHash" };

/** Validates a {@link ContentHash} at the edge (wire ops, CLI arguments). */
export const ContentHashSchema = z
  .string()
  .regex(/^h:[0-9a-f]{64}$/, "a content hash is h: followed by 64 lower-case hex digits")
  .transform((s) => s as ContentHash);

/** One definition to hash: its identity, its AST, its reference sites, and each site's target. */
export interface HashNode {
  /** The definition's identity (a DefId in the store, the qualified name for a loose file). */
  readonly id: string;
  readonly def: Definition;
  /** `referenceSites(def)`. */
  readonly sites: readonly ReferenceSite[];
  /** Per site, the identity of the definition it resolves to, or null when it resolves to none. */
  readonly targets: readonly (string | null)[];
}

function digest(text: string): ContentHash {
  return `h:${bytesToHex(blake3(utf8ToBytes(text)))}` as ContentHash;
}

/** A `nominal` type is a new type: it must not hash like a structurally equal one (language.md
 * §1.3.5), so its identity goes into its hash. */
function isNominal(def: Definition): boolean {
  if (def.layer !== "type") return false;
  const body = (def as unknown as { body?: { kind?: string } }).body;
  return body?.kind === "NominalType";
}

/**
 * Content hashes of `nodes` (ai-edit.md §9.5.1): blake3 over the canonical form, in which every
 * reference is replaced by its target's hash, so a change to a body changes its hash and every
 * dependent's, and a rename changes none. Definitions that reach each other (a tile and the reducer
 * it triggers) form a strongly connected component and are hashed together: the component's hash
 * covers every member's canonical form, with references inside it written as member positions.
 *
 * Targets outside `nodes` are looked up with `known`; a target that is neither in `nodes` nor known
 * hashes as an unresolved reference (by name and candidate layers). Pass a changed definition
 * together with all its transitive dependents to maintain hashes incrementally.
 */
export function computeHashes(
  nodes: readonly HashNode[],
  known: (id: string) => ContentHash | undefined = () => undefined,
): Map<string, ContentHash> {
  const byId = new Map<string, HashNode>();
  for (const n of nodes) byId.set(n.id, n);
  const result = new Map<string, ContentHash>();

  // A site is keyed by its target's identity (or, unresolved, by what it names), so the structure
  // of a definition does not depend on what its targets' hashes are and is computed once.
  const keyOf = (node: HashNode, i: number): string => {
    const t = node.targets[i] ?? null;
    const site = node.sites[i]!;
    return t === null ? `?${site.layers.join("|")}:${site.name}` : `=${t}`;
  };
  const external = (key: string): string => {
    if (key.startsWith("?")) return key;
    const target = key.slice(1);
    return result.get(target) ?? known(target) ?? `?${target}`;
  };

  for (const component of stronglyConnected(nodes, byId)) {
    const parts = component.map((node) =>
      canonicalStructure(
        node.def,
        node.sites,
        node.sites.map((_, i) => keyOf(node, i)),
      ),
    );
    if (component.length === 1 && !component[0]!.targets.includes(component[0]!.id)) {
      const node = component[0]!;
      const { structure, keys } = parts[0]!;
      result.set(node.id, digest(`${prefix(node)}${structure}\n${keys.map(external).join("\n")}`));
      continue;
    }
    hashComponent(component, parts, external, result);
  }
  return result;
}

function prefix(node: HashNode): string {
  return isNominal(node.def) ? `nominal:${node.id}\n` : "";
}

/**
 * Hashes one strongly connected component. Members are ordered by their canonical form with
 * in-component references blanked, which does not depend on names; members that still tie are
 * ordered by identity (equal blanked forms inside one cycle are rare and only then does identity
 * decide the order). The component's hash covers every member, with references inside it written
 * as member positions; each member's hash is the component's and its position.
 */
function hashComponent(
  component: readonly HashNode[],
  parts: readonly { readonly structure: string; readonly keys: readonly string[] }[],
  external: (key: string) => string,
  result: Map<string, ContentHash>,
): void {
  const members = new Set(component.map((n) => `=${n.id}`));
  const ordered = component
    .map((node, i) => {
      const { structure, keys } = parts[i]!;
      const blank = keys.map((k) => (members.has(k) ? "scc" : external(k))).join("\n");
      return { node, part: parts[i]!, key: `${prefix(node)}${structure}\n${blank}` };
    })
    .sort((a, b) =>
      a.key < b.key ? -1 : a.key > b.key ? 1 : a.node.id < b.node.id ? -1 : a.node.id > b.node.id ? 1 : 0,
    );
  const position = new Map(ordered.map((e, i) => [`=${e.node.id}`, i]));
  const forms = ordered.map(({ node, part }) => {
    const tokens = part.keys.map((k) => {
      const p = position.get(k);
      return p !== undefined ? `scc#${p}` : external(k);
    });
    return `${prefix(node)}${part.structure}\n${tokens.join("\n")}`;
  });
  const componentHash = digest(`scc:${forms.length}\n${forms.join("\n")}`);
  ordered.forEach((e, i) => {
    result.set(e.node.id, digest(`${componentHash}#${i}`));
  });
}

/**
 * Tarjan's algorithm, iterative (a long dependency chain must not overflow the stack), over the
 * edges from each node to the targets of its sites that are in `byId`. Components come out in
 * reverse topological order: every component after the ones it depends on.
 */
function stronglyConnected(nodes: readonly HashNode[], byId: ReadonlyMap<string, HashNode>): HashNode[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: HashNode[] = [];
  const components: HashNode[][] = [];
  let counter = 0;

  const edges = (n: HashNode): HashNode[] => {
    const out: HashNode[] = [];
    const seen = new Set<string>();
    for (const t of n.targets) {
      if (t === null || seen.has(t)) continue;
      seen.add(t);
      const m = byId.get(t);
      if (m !== undefined) out.push(m);
    }
    return out;
  };

  for (const root of nodes) {
    if (index.has(root.id)) continue;
    const work: { node: HashNode; next: HashNode[]; i: number }[] = [];
    const open = (node: HashNode): void => {
      index.set(node.id, counter);
      low.set(node.id, counter);
      counter++;
      stack.push(node);
      onStack.add(node.id);
      work.push({ node, next: edges(node), i: 0 });
    };
    open(root);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      if (frame.i < frame.next.length) {
        const m = frame.next[frame.i++]!;
        if (!index.has(m.id)) open(m);
        else if (onStack.has(m.id))
          low.set(frame.node.id, Math.min(low.get(frame.node.id)!, index.get(m.id)!));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent !== undefined) {
        low.set(parent.node.id, Math.min(low.get(parent.node.id)!, low.get(frame.node.id)!));
      }
      if (low.get(frame.node.id) === index.get(frame.node.id)) {
        const component: HashNode[] = [];
        let m: HashNode;
        do {
          m = stack.pop()!;
          onStack.delete(m.id);
          component.push(m);
        } while (m.id !== frame.node.id);
        components.push(component);
      }
    }
  }
  return components;
}
