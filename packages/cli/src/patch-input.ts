/** The patch `kumiki edit` takes, and the JSON `patch apply` reads, parsed before the store is opened. */
import { usageError } from "./errors.js";

/** One anchor of an edit: `find` must occur exactly once in the definition's text. */
export interface AnchorInput {
  readonly find: string;
  readonly replace: string;
}

/** An edit patch in one of its two forms. */
export type EditPatch =
  | { readonly kind: "anchors"; readonly anchors: readonly AnchorInput[] }
  /** The §9.6 auto-patch form: `{"body:2": "replace 'a' -> 'b'"}` (line N of the definition). */
  | { readonly kind: "lines"; readonly patch: Readonly<Record<string, string>> };

/** JSON text parsed, or a usage error naming where it came from and where it broke. */
export function parseJson(verb: string, text: string, from: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (e) {
    throw usageError(
      `kumiki ${verb}: ${from} is not JSON (${(e as Error).message}); see 'kumiki ${verb} --help'`,
      {
        from,
      },
    );
  }
}

function isAnchor(v: unknown): v is AnchorInput {
  if (typeof v !== "object" || v === null || Array.isArray(v)) return false;
  const keys = Object.keys(v);
  const o = v as Record<string, unknown>;
  return keys.length === 2 && typeof o.find === "string" && typeof o.replace === "string";
}

/**
 * An edit patch: `[{"find": A, "replace": B}, …]`, one `{"find", "replace"}`, or the `body:N` form
 * of ai-edit.md §9.6 (`{"body:2": "replace 'usres' -> 'users'"}`). Anything else is a usage error.
 */
export function parseEditPatch(verb: string, text: string, from: string): EditPatch {
  const v = parseJson(verb, text, from);
  const shape = `${from} must be [{"find": "…", "replace": "…"}, …], one such object, or {"body:N": "replace 'a' -> 'b'"}`;
  if (Array.isArray(v)) {
    if (v.length === 0 || !v.every(isAnchor)) throw usageError(`kumiki ${verb}: ${shape}`);
    return { kind: "anchors", anchors: v };
  }
  if (isAnchor(v)) return { kind: "anchors", anchors: [v] };
  if (typeof v === "object" && v !== null) {
    const entries = Object.entries(v as Record<string, unknown>);
    if (
      entries.length > 0 &&
      entries.every(([k, x]) => /^body:[1-9][0-9]*$/.test(k) && typeof x === "string")
    )
      return { kind: "lines", patch: Object.fromEntries(entries) as Record<string, string> };
  }
  throw usageError(`kumiki ${verb}: ${shape}`);
}

/** True when `v` looks like wire ops (objects carrying an "op-id"), not a bundle of requests. */
export function isWireOps(v: unknown): v is readonly { readonly "op-id": string }[] {
  return (
    Array.isArray(v) &&
    v.length > 0 &&
    v.every(
      (o) => typeof o === "object" && o !== null && typeof (o as { "op-id"?: unknown })["op-id"] === "string",
    )
  );
}

/** JSON, or JSON Lines (one value a line, as `.kumiki/op-log.jsonl` is) collected into an array. */
export function parseJsonOrLines(verb: string, text: string, from: string): unknown {
  const trimmed = text.trim();
  try {
    return JSON.parse(trimmed) as unknown;
  } catch {
    const lines = trimmed.split(/\r?\n/).filter((l) => l.trim() !== "");
    if (lines.length > 1) {
      return lines.map((l, i) => {
        try {
          return JSON.parse(l) as unknown;
        } catch (e) {
          throw usageError(`kumiki ${verb}: ${from} line ${i + 1} is not JSON (${(e as Error).message})`, {
            from,
          });
        }
      });
    }
    return parseJson(verb, trimmed, from);
  }
}
