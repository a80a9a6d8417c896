import type { TypeDef, TypeExpr } from "../lang/ast.js";
import { GENERIC_TYPES, PRIMITIVE_TYPES } from "../lang/stdlib.js";
import type { CheckContext } from "./context.js";
import type { CheckInput } from "./graph.js";

/**
 * A type as the checks reason about it. Deliberately small: only what a literal can be compared
 * with exactly. Anything the checker cannot pin down is `unknown`, which accepts every value — a
 * check is one-sided (errors.md E0201) and never reports what it cannot prove.
 */
export type Ty =
  | { readonly k: "prim"; readonly name: string; readonly text: Label }
  | { readonly k: "app"; readonly name: string; readonly args: readonly Ty[]; readonly text: Label }
  | { readonly k: "record"; readonly fields: ReadonlyMap<string, Ty>; readonly text: Label }
  | { readonly k: "union"; readonly variants: ReadonlyMap<string, readonly Ty[]>; readonly text: Label }
  | { readonly k: "nominal"; readonly inner: Ty; readonly text: Label }
  | { readonly k: "ref"; readonly force: () => Ty; readonly text: Label }
  | { readonly k: "unknown"; readonly text: Label };

/** How a type is shown: a string, or the type expression it was written as (printed on demand). */
export type Label = string | TypeExpr;

const NO_PARAMS: ReadonlyMap<string, Ty> = new Map();

/** The type nothing is known about: it accepts every value. */
export const UNKNOWN: Ty = { k: "unknown", text: "?" };

/** A type worked out only when something looks at it (most positions never need theirs). */
export function lazyTy(resolve: () => Ty): Ty {
  let cached: Ty | undefined;
  const force = (): Ty => {
    if (cached === undefined) cached = resolve();
    return cached;
  };
  return { k: "ref", text: "", force };
}

/** How `t` is written, for a message. */
export function tyText(t: Ty): string {
  // A lazy type has no label of its own: it is shown as what it resolves to.
  if (t.k === "ref" && t.text === "") return tyText(t.force());
  return typeof t.text === "string" ? t.text : typeText(t.text);
}

/** How a type expression is written (`Map(TodoId, Todo)`, `{id: TodoId}`), for messages. */
export function typeText(t: TypeExpr): string {
  switch (t.kind) {
    case "TypeRef":
      return t.args === undefined || t.args.length === 0
        ? t.name.name
        : `${t.name.name}(${t.args.map(typeText).join(", ")})`;
    case "RecordType":
      return `{${t.fields.map((f) => `${f.key.name}: ${f.value === undefined ? "?" : typeText(f.value)}`).join(", ")}}`;
    case "UnionType":
      return t.variants
        .map((v) =>
          v.payload === undefined || v.payload.length === 0
            ? v.name.name
            : `${v.name.name}(${v.payload.map(typeText).join(", ")})`,
        )
        .join(" | ");
    case "NominalType":
      return `nominal ${typeText(t.inner)}`;
    case "RefinedType":
      return typeText(t.base);
  }
}

/** Follows lazy references (a recursive or aliased type) to a concrete shape; cycles are unknown. */
export function norm(t: Ty): Ty {
  let cur = t;
  for (let i = 0; i < 64 && cur.k === "ref"; i++) cur = cur.force();
  return cur.k === "ref" ? UNKNOWN : cur;
}

/** Like {@link norm}, and through `nominal` wrappers too (a literal flows into a nominal). */
export function structural(t: Ty): Ty {
  let cur = norm(t);
  for (let i = 0; i < 64 && cur.k === "nominal"; i++) cur = norm(cur.inner);
  return cur;
}

/**
 * Resolves type expressions written in definitions to {@link Ty}, reading through the tracked
 * context (so a change to a type another definition uses re-checks that definition).
 */
export class TypeResolver {
  private readonly memo = new Map<string, Ty>();

  constructor(private readonly ctx: CheckContext) {}

  /** The type `t`, written in definition `within`, with `params` for the type parameters in scope. */
  resolve(within: CheckInput, t: TypeExpr, params: ReadonlyMap<string, Ty> = NO_PARAMS): Ty {
    const text = t;
    switch (t.kind) {
      case "RefinedType":
        return this.resolve(within, t.base, params);
      case "NominalType":
        return { k: "nominal", inner: this.resolve(within, t.inner, params), text };
      case "RecordType": {
        const fields = new Map<string, Ty>();
        for (const f of t.fields) {
          if (!fields.has(f.key.name))
            fields.set(f.key.name, f.value === undefined ? UNKNOWN : this.resolve(within, f.value, params));
        }
        return { k: "record", fields, text };
      }
      case "UnionType": {
        const variants = new Map<string, readonly Ty[]>();
        for (const v of t.variants) {
          if (!variants.has(v.name.name))
            variants.set(
              v.name.name,
              (v.payload ?? []).map((p) => this.lazy(within, p, params)),
            );
        }
        return { k: "union", variants, text };
      }
      case "TypeRef":
        return this.resolveRef(within, t, params, text);
    }
  }

  private lazy(within: CheckInput, t: TypeExpr, params: ReadonlyMap<string, Ty>): Ty {
    let cached: Ty | undefined;
    let busy = false;
    return {
      k: "ref",
      text: t,
      force: () => {
        if (cached !== undefined) return cached;
        if (busy) return UNKNOWN;
        busy = true;
        cached = this.resolve(within, t, params);
        busy = false;
        return cached;
      },
    };
  }

  private resolveRef(
    within: CheckInput,
    t: Extract<TypeExpr, { kind: "TypeRef" }>,
    params: ReadonlyMap<string, Ty>,
    text: Label,
  ): Ty {
    const name = t.name.name;
    const args = t.args ?? [];
    const param = params.get(name);
    if (param !== undefined) return param;
    const res = this.ctx.resolve(within, t.name, ["type"]);
    const target = res.target;
    if (target !== undefined && target.def.kind === "TypeDef")
      return this.named(
        target,
        args.map((a) => this.lazy(within, a, params)),
        text,
      );
    if (target !== undefined) return UNKNOWN;
    if (PRIMITIVE_TYPES.has(name)) return args.length === 0 ? { k: "prim", name, text } : UNKNOWN;
    if (GENERIC_TYPES.has(name))
      return { k: "app", name, args: args.map((a) => this.lazy(within, a, params)), text };
    return UNKNOWN;
  }

  /** A program type applied to `args`, resolved in its own definition. */
  private named(target: CheckInput, args: readonly Ty[], text: Label): Ty {
    const def = target.def as TypeDef;
    const key = args.length === 0 ? target.id : undefined;
    if (key !== undefined) {
      const hit = this.memo.get(key);
      if (hit !== undefined) return hit;
    }
    const params = new Map<string, Ty>();
    def.params.forEach((p, i) => {
      params.set(p.name, args[i] ?? UNKNOWN);
    });
    let resolved: Ty | undefined;
    let busy = false;
    const ref: Ty = {
      k: "ref",
      text,
      force: () => {
        if (resolved !== undefined) return resolved;
        if (busy) return UNKNOWN;
        busy = true;
        const body = this.resolve(target, def.body, params);
        resolved = withText(body, text);
        busy = false;
        return resolved;
      },
    };
    if (key !== undefined) this.memo.set(key, ref);
    return ref;
  }
}

/** `t` shown as `text` (a named type is named in messages, not spelled out). */
function withText(t: Ty, text: Label): Ty {
  return { ...t, text } as Ty;
}

/** The variant tags of a union-like type (a user union, `Option`, `Result`), or undefined. */
export function variantsOf(t: Ty): ReadonlyMap<string, readonly Ty[]> | undefined {
  const s = structural(t);
  if (s.k === "union") return s.variants;
  if (s.k === "app" && s.name === "Option")
    return new Map([
      ["None", []],
      ["Some", [s.args[0] ?? UNKNOWN]],
    ]);
  if (s.k === "app" && s.name === "Result")
    return new Map([
      ["Ok", [s.args[0] ?? UNKNOWN]],
      ["Err", [s.args[1] ?? UNKNOWN]],
    ]);
  return undefined;
}
