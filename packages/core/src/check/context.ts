import type { Layer } from "../lang/layers.js";
import type { ReferenceSite } from "../lang/references.js";
import { type NameSuggestion, nearestName } from "../lang/similarity.js";
import type { Span } from "../lang/span.js";
import { requireCode } from "./codes.js";
import type { AutoPatch, Diagnostic, Suggestion } from "./diagnostic.js";
import { type CheckInput, Deps, type Graph, nameKey } from "./graph.js";
import { bodyLine } from "./patch.js";
import type { CapabilityNeed } from "./shared-patches.js";

/** The options a check runs with, normalized. */
export interface CheckSettings {
  readonly a11y: boolean;
  readonly requireApp: boolean;
  /** Capabilities registered by a kumiki.caps.json manifest. */
  readonly registeredCaps: ReadonlySet<string>;
}

const siteIndexCache = new WeakMap<CheckInput, Map<number, number>>();

function siteIndex(node: CheckInput): Map<number, number> {
  let m = siteIndexCache.get(node);
  if (m === undefined) {
    m = new Map();
    node.sites.forEach((s, i) => {
      if (!m!.has(s.span.offset)) m!.set(s.span.offset, i);
    });
    siteIndexCache.set(node, m);
  }
  return m;
}

/** What a name written in a definition resolves to. */
export interface Resolution {
  /** The reference site at the name, when reference extraction made one. */
  readonly site?: ReferenceSite;
  /** The definition it resolves to; absent when it resolves to none. */
  readonly target?: CheckInput;
}

/** Extra parts of a diagnostic beyond code, span and message. */
export interface ReportExtras {
  readonly kind?: string;
  readonly suggestion?: NameSuggestion;
  readonly autoPatch?: AutoPatch;
}

/**
 * Everything one definition's check may read, each read recorded in {@link deps} so the
 * incremental checker knows what can invalidate the result, and the sink it reports into.
 */
export class CheckContext {
  readonly deps = new Deps();
  readonly out: Diagnostic[] = [];
  /** The E0301 diagnostics of {@link out} with the capability each needs (shared-patches.ts). */
  readonly needs = new Map<Diagnostic, CapabilityNeed>();

  constructor(
    readonly graph: Graph,
    readonly settings: CheckSettings,
    /** The definition being checked. */
    readonly node: CheckInput,
  ) {
    this.deps.ids.add(node.id);
  }

  /** A definition by identity. */
  get(id: string): CheckInput | undefined {
    this.deps.ids.add(id);
    return this.graph.nodes.get(id);
  }

  /**
   * What the name at `ident` in `within` resolves to: its site's target when it has a site, else
   * the first of `fallback`'s layers that defines the name (a position reference extraction does
   * not treat as a reference).
   */
  resolve(
    within: CheckInput,
    ident: { readonly name: string; readonly span: Span },
    fallback: readonly Layer[] = [],
  ): Resolution {
    const i = siteIndex(within).get(ident.span.offset);
    if (i !== undefined) {
      const site = within.sites[i]!;
      const t = within.targets[i];
      if (t === null || t === undefined) return { site };
      const target = this.get(t);
      return target === undefined ? { site } : { site, target };
    }
    for (const layer of fallback) {
      const target = this.lookup(layer, ident.name);
      if (target !== undefined) return { target };
    }
    return {};
  }

  /** The site (if any) at `offset` in `within`. */
  siteAt(within: CheckInput, offset: number): ReferenceSite | undefined {
    const i = siteIndex(within).get(offset);
    return i === undefined ? undefined : within.sites[i];
  }

  /** The first definition of `name` in `layer`, by name. */
  lookup(layer: Layer, name: string): CheckInput | undefined {
    this.deps.keys.add(nameKey(layer, name));
    const id = this.graph.idsOf(layer, name)[0];
    return id === undefined ? undefined : this.get(id);
  }

  /** Every name defined in `layer`. */
  names(layer: Layer): Iterable<string> {
    this.deps.layers.add(layer);
    return this.graph.layerNames.get(layer)?.keys() ?? [];
  }

  /** The app: the first app definition by (name, id), or undefined. */
  app(): CheckInput | undefined {
    this.deps.app = true;
    const id = this.graph.apps[0];
    if (id === undefined) return undefined;
    this.deps.ids.add(id);
    return this.graph.nodes.get(id);
  }

  /** Whether some reducer declares the timer `name`. */
  hasTimer(name: string): boolean {
    this.deps.timers = true;
    return this.graph.timers.has(name);
  }

  /** Every declared timer name. */
  timerNames(): Iterable<string> {
    this.deps.timers = true;
    return this.graph.timers.keys();
  }

  /** The closest name to `name` among the names of `layers` plus `extra`. */
  suggest(name: string, layers: readonly Layer[], extra: Iterable<string> = []): NameSuggestion | undefined {
    const pool = new Set<string>(extra);
    for (const layer of layers) for (const n of this.names(layer)) pool.add(n);
    return nearestName(name, pool);
  }

  /** The closest of `candidates` to `name` (candidates that are not definition names). */
  suggestFrom(name: string, candidates: Iterable<string>): NameSuggestion | undefined {
    return nearestName(name, candidates);
  }

  /** Reports a diagnostic about the current definition at `span`. */
  report(code: string, span: Span, message: string, extras: ReportExtras = {}): void {
    this.out.push(makeDiagnostic(this.node, code, span, message, extras));
  }

  /**
   * Reports a diagnostic whose repair is declaring `need.cap` in the app `need.app`: the checker
   * gives each app one patch for all its missing capabilities (shared-patches.ts).
   */
  reportNeed(code: string, span: Span, message: string, need: CapabilityNeed): void {
    const d = makeDiagnostic(this.node, code, span, message);
    this.out.push(d);
    this.needs.set(d, need);
  }
}

/** `tile.TodoRow.body:2`: line 2 of the definition, counted from its first line. */
export function locationOf(node: CheckInput, span: Span): string {
  return `${node.def.layer}.${node.def.name.name}.body:${bodyLine(node, span)}`;
}

/** Builds a diagnostic about `node` (severity and default kind from the registry). */
export function makeDiagnostic(
  node: CheckInput,
  code: string,
  span: Span,
  message: string,
  extras: ReportExtras = {},
): Diagnostic {
  const info = requireCode(code);
  const kind = extras.kind ?? info.kinds[0]!;
  if (!info.kinds.includes(kind)) throw new Error(`kind ${kind} is not registered under ${code}`);
  const suggestion: Suggestion | undefined =
    extras.suggestion === undefined
      ? undefined
      : { kind: "did-you-mean", name: extras.suggestion.name, similarity: extras.suggestion.similarity };
  return {
    code,
    kind,
    severity: info.severity,
    location: locationOf(node, span),
    message,
    ...(suggestion !== undefined ? { suggestion } : {}),
    ...(extras.autoPatch !== undefined ? { "auto-patch": extras.autoPatch } : {}),
    definition: node.id,
    // One position convention (docs/errors.md, Positions): the line is the location's body:N.
    span: { ...span, line: bodyLine(node, span) },
  };
}
