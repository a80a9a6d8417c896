import { canonicalItem } from "../store/bundle-form.js";
import { type BundleItem, BundleItemSchema } from "../store/inputs.js";
import { LINE_KEY, REPLACE_INSTRUCTION } from "../store/line-patch.js";
import { ok, quoted, reject, type StoreResult } from "../store/result.js";

type Out = StoreResult<BundleItem[]>;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function bad(where: string, message: string): Out {
  return reject("invalid-input", `invalid patch${where === "" ? "" : ` at ${where}`}: ${message}`, {
    path: where,
  });
}

/**
 * An auto-patch edit (§9.6) as the store's bundle item: its `body:N` lines kept as they are, for
 * the store's one interpreter of them (store/line-patch.ts) to anchor against the text as shown.
 */
function autoPatchEdit(op: Record<string, unknown>, where: string): Out {
  const { layer, name } = op;
  if (typeof layer !== "string" || typeof name !== "string")
    return bad(where, "an auto-patch edit needs a string layer and name (or a bundle item's qname)");
  const extra = Object.keys(op).filter((k) => !["op", "layer", "name", "patch"].includes(k));
  if (extra.length > 0) return bad(where, `unknown field ${quoted(extra[0])} in an auto-patch edit`);
  if (!isObject(op.patch))
    return bad(where, `an auto-patch edit needs a patch object ({"body:2": "replace 'a' -> 'b'"})`);
  const lines: Record<string, string> = {};
  for (const [key, instruction] of Object.entries(op.patch)) {
    if (!LINE_KEY.test(key))
      return bad(`${where}.patch`, `${quoted(key)} is not a line key (body:N, N from 1)`);
    if (typeof instruction !== "string" || !REPLACE_INSTRUCTION.test(instruction))
      return bad(
        `${where}.patch.${key}`,
        `${quoted(instruction)} is not an instruction of the form replace 'A' -> 'B'`,
      );
    lines[key] = instruction;
  }
  if (Object.keys(lines).length === 0) return bad(`${where}.patch`, "the patch holds no line");
  return ok([{ op: "edit", qname: `${layer}.${name}`, patch: lines }]);
}

function normalizeAt(input: unknown, where: string, depth: number): Out {
  if (depth > 8) return bad(where, "nested too deeply");
  if (Array.isArray(input)) {
    const out: BundleItem[] = [];
    for (let i = 0; i < input.length; i++) {
      const r = normalizeAt(input[i], `${where}[${i}]`, depth + 1);
      if (!r.ok) return r;
      out.push(...r.value);
    }
    return ok(out);
  }
  if (!isObject(input))
    return bad(
      where,
      "expected a bundle, an auto-patch, or a diagnostic carrying one (a JSON object or array)",
    );
  // A whole diagnostic (`kumiki check --json` output): its auto-patch.
  if (typeof input.code === "string" && input.op === undefined) {
    if (input["auto-patch"] === undefined)
      return bad(
        where,
        `diagnostic ${input.code}${typeof input.location === "string" ? ` at ${input.location}` : ""} carries no auto-patch; it needs a fix by hand`,
      );
    return normalizeAt(input["auto-patch"], `${where}.auto-patch`, depth + 1);
  }
  // A store bundle `{ops: [...]}` or an auto-patch bundle `{op: "bundle", ops: [...]}`.
  if (input.ops !== undefined && (input.op === undefined || input.op === "bundle")) {
    const extra = Object.keys(input).filter((k) => k !== "ops" && k !== "op");
    if (extra.length > 0) return bad(where, `unknown field ${quoted(extra[0])} beside ops`);
    if (!Array.isArray(input.ops)) return bad(`${where}.ops`, "ops must be an array");
    return normalizeAt(input.ops, `${where}.ops`, depth + 1);
  }
  // An auto-patch edit names its target by layer and name and keys its anchors by line; a bundle
  // item's edit names it by qname. (An auto-patch add is a bundle item as it is.)
  if (input.op === "edit" && input.qname === undefined && isObject(input.patch))
    return autoPatchEdit(input, where);
  const r = BundleItemSchema.safeParse(canonicalItem(input));
  if (!r.success) {
    const issue = r.error.issues[0];
    const path = issue === undefined ? "" : issue.path.map(String).join(".");
    return bad(path === "" ? where : `${where}.${path}`, issue?.message ?? "not a bundle item");
  }
  return ok([r.data as BundleItem]);
}

/**
 * What `kumiki patch apply` reads, as the store's bundle items: a store bundle (`{ops: [...]}` or an
 * array of items), a diagnostic's §9.6 auto-patch (`{op: "edit", layer, name, patch: {"body:2":
 * "replace 'a' -> 'b'"}}`, `{op: "add", layer, name, body}`, `{op: "bundle", ops}`), a whole
 * diagnostic carrying one, a list of any of these, or the JSON text of one. Nothing is applied;
 * `store.apply` takes the result. Refused (`invalid-input`, with the path of the offending part)
 * when the input is none of these, or is empty.
 */
export function normalizePatch(input: unknown): StoreResult<readonly BundleItem[]> {
  let value = input;
  if (typeof input === "string") {
    try {
      value = JSON.parse(input);
    } catch (e) {
      return bad("", `the text is not JSON: ${e instanceof Error ? e.message : String(e)}`);
    }
  }
  const r = normalizeAt(value, "", 0);
  if (!r.ok) return r;
  if (r.value.length === 0) return bad("", "it holds no op");
  return r;
}
