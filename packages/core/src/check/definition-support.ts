/**
 * What the checks of one definition share: the scope of locals and the walk's environment, and the
 * small predicates on names and expressions they ask.
 */
import type { Expr, Field, Ident } from "../lang/ast.js";
import type { Layer } from "../lang/layers.js";
import type { Span } from "../lang/span.js";
import { type Ty, UNKNOWN } from "./types.js";

/** A local binding in scope, with its type when known. */
export interface Scope {
  readonly name: string;
  readonly ty: Ty;
  readonly next: Scope | null;
}

export type Where = "type" | "slot" | "effect" | "reducer" | "tile" | "fn" | "app" | "test";

export interface Env {
  readonly scope: Scope | null;
  readonly where: Where;
  /** Inside a method-call argument, where `$1` / `$2` are the method's own positionals. */
  readonly fragment?: boolean;
}

export function bind(scope: Scope | null, name: string, ty: Ty = UNKNOWN): Scope {
  return { name, ty, next: scope };
}

export function lookupLocal(scope: Scope | null, name: string): Scope | undefined {
  for (let s = scope; s !== null; s = s.next) if (s.name === name) return s;
  return undefined;
}

export function localNames(scope: Scope | null): string[] {
  const out: string[] = [];
  for (let s = scope; s !== null; s = s.next) if (!s.name.startsWith("$")) out.push(s.name);
  return out;
}

export function isCapitalized(name: string): boolean {
  const c = name.charCodeAt(0);
  return c >= 65 && c <= 90;
}

/** The name of a reducer written in a handler position, in whichever shape the parser gave it. */
export function handlerName(v: Expr): Ident | undefined {
  if (v.kind === "Ident") return v;
  if (v.kind === "TileCall") return v.callee;
  if (v.kind === "Call" && v.callee.kind === "Ident" && v.args.length === 0) return v.callee;
  return undefined;
}

export function field(fields: readonly Field[] | undefined, name: string): Field | undefined {
  return fields?.find((f) => f.key.name === name);
}

export function describe(layers: readonly Layer[]): string {
  return layers.join(" or ");
}

export const EFFECT_ID: Ty = { k: "prim", name: "EffectId", text: "EffectId" };

/** Whether a primitive's name is a number's (`Number`: an Int or a Float, which is not known). */
export function isNumber(name: string): boolean {
  return name === "Int" || name === "Float" || name === "Number";
}

/** What every record answers besides its fields: an updated copy, and its text. */
export const RECORD_MEMBERS: ReadonlySet<string> = new Set(["copy", "show"]);

/** The primitive types an expression's type is read off from (literals, operators). */
export const PRIM = {
  Int: { k: "prim", name: "Int", text: "Int" },
  Float: { k: "prim", name: "Float", text: "Float" },
  Text: { k: "prim", name: "Text", text: "Text" },
  Bool: { k: "prim", name: "Bool", text: "Bool" },
  /** A number not known to be Int or Float (`a / b` of two Ints): only operators read it. */
  Number: { k: "prim", name: "Number", text: "a number" },
} as const satisfies Record<string, Ty>;

export const MOTION_PROPERTIES: ReadonlySet<string> = new Set([
  "opacity",
  "translate-x",
  "translate-y",
  "scale",
  "rotate",
]);
export const MOTION_EASINGS: ReadonlySet<string> = new Set([
  "linear",
  "ease",
  "ease-in",
  "ease-out",
  "ease-in-out",
]);
export const MOTION_DURATIONS: ReadonlySet<string> = new Set(["fast", "normal", "slow"]);
export const MOTION_DIRECTIONS: ReadonlySet<string> = new Set([
  "normal",
  "reverse",
  "alternate",
  "alternate-reverse",
]);

/** The value of a number literal, negated or not. */
export function numberOf(e: Expr): number | undefined {
  if (e.kind === "Number") return e.value;
  if (e.kind === "Unary" && e.op === "-" && e.operand.kind === "Number") return -e.operand.value;
  return undefined;
}

/** Whether `e` is a literal shape {@link checkValue} judges (the rest is left alone). */
export function isLiteral(e: Expr): boolean {
  switch (e.kind) {
    case "Number":
    case "String":
    case "Bool":
    case "Unit":
    case "List":
    case "Tuple":
    case "Map":
    case "Record":
      return true;
    case "If":
      return isLiteral(e.then) || isLiteral(e.else);
    case "Ident":
      return isCapitalized(e.name);
    case "Call":
      return e.callee.kind === "Ident" && isCapitalized(e.callee.name);
    default:
      return false;
  }
}

export function mergeInto(into: Map<string, Span>, from: ReadonlyMap<string, Span>): void {
  for (const [k, v] of from) if (!into.has(k)) into.set(k, v);
}

/** Whether a tile body renders a `route-outlet` anywhere. */
export function usesRouteOutlet(e: Expr): boolean {
  switch (e.kind) {
    case "TileCall":
      if (e.callee.name === "route-outlet") return true;
      return (
        (e.args ?? []).some(usesRouteOutlet) ||
        (e.fields ?? []).some((f) => f.value !== undefined && usesRouteOutlet(f.value))
      );
    case "Ident":
      return e.name === "route-outlet";
    case "For":
    case "When":
      return usesRouteOutlet(e.body);
    case "If":
      return usesRouteOutlet(e.then) || usesRouteOutlet(e.else);
    case "Match":
      return e.arms.some((a) => usesRouteOutlet(a.body));
    case "Let":
      return usesRouteOutlet(e.body);
    default:
      return false;
  }
}
