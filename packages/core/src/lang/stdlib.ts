/**
 * The standard library as the checker sees it: capabilities, standard effects, built-in calls and
 * the names a type may be (stdlib.md §2.1, §2.4–§2.6, http.md, style.md §4.3). Kept to what is
 * specified or what the public toolchain lowers, so that a checked name is never refused when the
 * runtime accepts it.
 */

/** Capabilities `app.caps` accepts without a manifest (stdlib.md §2.5; `indexed.delete` is lowered too). */
export const STANDARD_CAPABILITIES: ReadonlySet<string> = new Set([
  "http.get",
  "http.post",
  "http.put",
  "http.patch",
  "http.delete",
  "http.cancel",
  "storage.read",
  "storage.write",
  "session.read",
  "session.write",
  "indexed.read",
  "indexed.write",
  "indexed.delete",
  "nav.push",
  "nav.replace",
  "nav.back",
  "clipboard.read",
  "clipboard.write",
  "notification.show",
  "analytics.send",
  "log.write",
  "crypto.random",
  "crypto.hash",
  "media.camera",
  "media.microphone",
  "geo.read",
  "socket.connect",
  "socket.send",
]);

/** A standard effect (stdlib.md §2.6): the capability it needs and how many arguments it takes. */
export interface BuiltinEffect {
  /** null: needs no capability. */
  readonly cap: string | null;
  readonly arity: 0 | 1;
}

/** Effects every program may emit without declaring them (a declaration of the name wins). */
export const BUILTIN_EFFECTS: ReadonlyMap<string, BuiltinEffect> = new Map([
  ["navigate", { cap: "nav.push", arity: 1 }],
  ["navigate-replace", { cap: "nav.replace", arity: 1 }],
  ["navigate-back", { cap: "nav.back", arity: 0 }],
  ["scroll-to", { cap: null, arity: 1 }],
  ["toast", { cap: "notification.show", arity: 1 }],
  ["confirm", { cap: "notification.show", arity: 1 }],
  ["log", { cap: "log.write", arity: 1 }],
]);

/** Unqualified built-in calls and how many arguments they take (`max` Infinity: variadic). */
export const BUILTIN_CALLS: ReadonlyMap<string, { readonly min: number; readonly max: number }> = new Map([
  ["now", { min: 0, max: 0 }],
  ["random", { min: 0, max: 0 }],
  ["fmt", { min: 1, max: Number.POSITIVE_INFINITY }],
  ["panic", { min: 1, max: 1 }],
  ["file-url", { min: 1, max: 1 }],
  ["prefers-dark", { min: 0, max: 0 }],
]);

/** Documented calls the toolchain does not implement (E0802). */
export const UNIMPLEMENTED_CALLS: ReadonlySet<string> = new Set(["trace"]);

/** The call that lowers only inside a property-test invariant (testing.md §8.3). */
export const RUN_REDUCER = "run-reducer";

/** Namespaces whose members are a closed set of calls: `Duration.ms(n)`, `EffectId.none`. */
export const QUALIFIED_CALLS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ["Duration", new Set(["ms", "s", "m", "min", "h", "d", "days"])],
  ["Bytes", new Set(["from-text", "from-base64", "from-bytes"])],
  ["Decoder", new Set(["Json", "Text", "Bytes", "None"])],
  ["EffectId", new Set(["none"])],
]);

/** Members every type name has as a call: `TodoId.fresh()`, `Int.parse(t)`, `Time.show(v)`. */
export const TYPE_MEMBER_CALLS: ReadonlySet<string> = new Set(["fresh", "parse", "show"]);

// The primitives and the generic constructors are the language's (a name in them is never a
// reference), so the front-end's list is the one source of truth.
export { GENERIC_TYPES, PRIMITIVE_TYPES } from "./parser/builtins.js";

/** The standard library's domain types (stdlib.md §2.1.3); a program may define its own. */
export const DOMAIN_TYPES: ReadonlySet<string> = new Set([
  "HttpStatus",
  "HttpError",
  "Url",
  "Email",
  "Uuid",
  "Duration",
  "Route",
  "FormData",
  "FormValue",
  "File",
  "PanicInfo",
]);

/**
 * True when a reference site may stay unbound in a graph: a union variant, or a name the standard
 * library provides (a domain type such as `HttpError` or `Route`, a built-in call such as `fmt`,
 * a built-in effect such as `navigate`) that no definition of the program shadows. The store's write gate and its
 * broken-reference view use it, so what the checker accepts the store accepts.
 */
export function isStandardReference(site: {
  readonly role: string;
  readonly name: string;
  readonly layers: readonly string[];
}): boolean {
  // `ui.click(_)`: the wildcard selector matches any tile and names none.
  if (site.role === "variant" || (site.role === "selector" && site.name === "_")) return true;
  if (site.layers.includes("type") && DOMAIN_TYPES.has(site.name)) return true;
  if (site.layers.includes("fn") && BUILTIN_CALLS.has(site.name)) return true;
  return site.layers.includes("effect") && BUILTIN_EFFECTS.has(site.name);
}

/** The closed theme token groups of `@group.name` (style.md §4.3). */
export const TOKEN_GROUPS: ReadonlySet<string> = new Set([
  "colors",
  "spacing",
  "radius",
  "shadow",
  "typography",
  "breakpoints",
]);

/** The capability name form a manifest entry must have (`group.action`). */
const CAP_NAME = /^[a-z][a-z0-9]*\.[a-z][a-z0-9-]*$/;

/** A kumiki.caps.json manifest as read from disk (stdlib.md §2.5). */
export interface CapabilityManifest {
  readonly capabilities: readonly (string | { readonly name: string; readonly description?: string })[];
}

/**
 * The capability names a manifest registers. Entries that are not `group.action` names, or that
 * re-declare a standard capability, are ignored here (the manifest's own validation reports them).
 */
export function manifestCapabilities(
  manifest: CapabilityManifest | readonly string[] | undefined,
): Set<string> {
  const out = new Set<string>();
  if (manifest === undefined) return out;
  const entries = Array.isArray(manifest)
    ? (manifest as readonly string[])
    : (manifest as CapabilityManifest).capabilities;
  for (const e of entries) {
    const name = typeof e === "string" ? e : e.name;
    if (typeof name === "string" && CAP_NAME.test(name) && !STANDARD_CAPABILITIES.has(name)) out.add(name);
  }
  return out;
}
