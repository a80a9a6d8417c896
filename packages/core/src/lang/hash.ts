import { z } from "zod";
import type { Definition } from "./ast.js";
import { blake3Hex } from "./blake3.js";
import { ByteWriter } from "./byte-writer.js";
import { writeLines } from "./canonical.js";
import type { ReferenceSite } from "./references.js";
import { stronglyConnected } from "./scc.js";
import { canonicalStructure } from "./structure-cache.js";

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

const NEWLINE = 0x0a;
const decoder = new TextDecoder();

function digest(bytes: Uint8Array): ContentHash {
  return `h:${blake3Hex(bytes)}` as ContentHash;
}

/** A `nominal` type is a new type: it must not hash like a structurally equal one (language.md
 * §1.3.5), so its identity goes into its hash. */
function isNominal(def: Definition): boolean {
  if (def.layer !== "type") return false;
  const body = (def as unknown as { body?: { kind?: string } }).body;
  return body?.kind === "NominalType";
}

function prefix(node: HashNode): string {
  return isNominal(node.def) ? `nominal:${node.id}\n` : "";
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
 * together with all its transitive dependents to maintain hashes incrementally. Identities are
 * distinct; of two nodes with one identity, the first counts.
 */
export function computeHashes(
  nodes: readonly HashNode[],
  known: (id: string) => ContentHash | undefined = () => undefined,
): Map<string, ContentHash> {
  const position = new Map<string, number>();
  for (let i = 0; i < nodes.length; i++) if (!position.has(nodes[i]!.id)) position.set(nodes[i]!.id, i);
  const result = new Map<string, ContentHash>();

  const external = (key: string): string => {
    if (key.startsWith("?")) return key;
    const target = key.slice(1);
    return result.get(target) ?? known(target) ?? `?${target}`;
  };

  const out = new ByteWriter();
  for (const component of stronglyConnected(nodes.length, dependencyEdges(nodes, position))) {
    const first = nodes[component[0]!]!;
    if (component.length === 1 && position.get(first.id) !== component[0]) continue;
    if (component.length === 1 && !first.targets.includes(first.id)) {
      const { bytes, keys } = canonicalStructure(first.def, first.sites, first.targets);
      out.reset();
      out.text(prefix(first));
      out.bytes(bytes);
      out.byte(NEWLINE);
      writeLines(out, keys.map(external));
      result.set(first.id, digest(out.view()));
      continue;
    }
    hashComponent(
      component.map((i) => nodes[i]!),
      out,
      external,
      result,
    );
  }
  return result;
}

/** Per node, the positions of the distinct targets it has among `nodes` (in order of first use). */
function dependencyEdges(nodes: readonly HashNode[], position: ReadonlyMap<string, number>): number[][] {
  return nodes.map((n) => {
    const out: number[] = [];
    for (const t of n.targets) {
      if (t === null) continue;
      const m = position.get(t);
      if (m !== undefined && !out.includes(m)) out.push(m);
    }
    return out;
  });
}

/** One member of a strongly connected component: its canonical structure and reference keys. */
interface Part {
  readonly node: HashNode;
  readonly prefix: string;
  readonly structure: Uint8Array;
  readonly keys: readonly string[];
  /** What members are ordered by: the canonical form with in-component references blanked. */
  readonly order: string;
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
  out: ByteWriter,
  external: (key: string) => string,
  result: Map<string, ContentHash>,
): void {
  const members = new Set(component.map((n) => `=${n.id}`));
  const parts: Part[] = component.map((node) => {
    const { bytes: structure, keys } = canonicalStructure(node.def, node.sites, node.targets);
    const blank = keys.map((k) => (members.has(k) ? "scc" : external(k))).join("\n");
    const p = prefix(node);
    // The structure is UTF-8 of well-formed text (names are ASCII, strings are JSON-escaped), so
    // decoding it gives back the text the order has always been taken over.
    return { node, prefix: p, structure, keys, order: `${p}${decoder.decode(structure)}\n${blank}` };
  });
  parts.sort((a, b) =>
    a.order < b.order
      ? -1
      : a.order > b.order
        ? 1
        : a.node.id < b.node.id
          ? -1
          : a.node.id > b.node.id
            ? 1
            : 0,
  );
  const position = new Map(parts.map((e, i) => [`=${e.node.id}`, i]));
  out.reset();
  out.text(`scc:${parts.length}\n`);
  parts.forEach((part, i) => {
    if (i > 0) out.byte(NEWLINE);
    out.text(part.prefix);
    out.bytes(part.structure);
    out.byte(NEWLINE);
    writeLines(
      out,
      part.keys.map((k) => {
        const p = position.get(k);
        return p !== undefined ? `scc#${p}` : external(k);
      }),
    );
  });
  const componentHash = digest(out.view());
  parts.forEach((part, i) => {
    out.reset();
    out.text(`${componentHash}#${i}`);
    result.set(part.node.id, digest(out.view()));
  });
}
