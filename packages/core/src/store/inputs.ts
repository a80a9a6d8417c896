/** The Store API's inputs: zod schemas of every request, and their errors named by item and field. */
import { z } from "zod";
import type { Layer } from "../lang/layers.js";
import { OP_KINDS, OP_LIMITS } from "../ops/op.js";
import { LINE_KEY } from "./line-patch.js";
import type { StoredOp } from "./op-log.js";
import { quoted, type Rejection } from "./result.js";

// ---------------------------------------------------------------------------------------------
// Inputs. Adapters pass what a person or an agent typed; every field is checked here.
// ---------------------------------------------------------------------------------------------

const Task = z.string().min(1).max(128).optional();
const Text = z.string().max(1_000_000);

/** `add`: `layer` + `name` + `body` (what follows the name, or a §9.2.2 CLI form), or a whole `source`. */
export const AddInputSchema = z
  .strictObject({
    layer: z.string().optional(),
    name: z.string().optional(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
  })
  .refine(
    (i) => (i.source !== undefined) !== (i.body !== undefined),
    "give either body (with layer and name) or source, not both",
  )
  .refine(
    (i) => i.source !== undefined || (i.layer !== undefined && i.name !== undefined),
    "a body needs layer and name",
  );
/** `replace`: the target and its new `body`, or a whole `source`. */
export const ReplaceInputSchema = z
  .strictObject({ qname: z.string(), body: Text.optional(), source: Text.optional(), task: Task })
  .refine((i) => (i.source !== undefined) !== (i.body !== undefined), "give either body or source, not both");
/**
 * An edit's patch: anchors (each `find` must match exactly once in the text as shown; one anchor
 * may be given alone, as `kumiki edit` takes it), or the `body:N` form of ai-edit.md §9.6
 * (`{"body:2": "replace 'a' -> 'b'"}`, see line-patch.ts).
 */
const Anchor = z.strictObject({ find: z.string(), replace: z.string() });
const EditPatchSchema = z.union([
  z.array(Anchor).min(1).max(256),
  Anchor.transform((a) => [a]),
  z
    .record(z.string().regex(LINE_KEY, "a line key is body:N, N from 1"), z.string().max(1_000_000))
    .refine((r) => Object.keys(r).length > 0, "the patch holds no line")
    .refine((r) => Object.keys(r).length <= 256, "at most 256 lines"),
]);
/** `edit`: the target and its patch (anchors, or `body:N` lines). */
export const EditInputSchema = z.strictObject({
  qname: z.string(),
  patch: EditPatchSchema,
  task: Task,
});
/** `rename`: the target and its new name. */
export const RenameInputSchema = z.strictObject({ qname: z.string(), newName: z.string(), task: Task });
const removeFields = {
  qname: z.string(),
  /** Also remove every definition that references it, transitively, in the same atomic write. */
  cascade: z.boolean().optional(),
  /** Remove it although definitions reference it, leaving those references dangling (with warnings). */
  force: z.boolean().optional(),
  task: Task,
};
const notBoth = (i: { cascade?: boolean | undefined; force?: boolean | undefined }) =>
  !(i.cascade === true && i.force === true);
const notBothMessage = "give cascade or force, not both";
/** `remove`: the target; `cascade` or `force` when definitions reference it. */
export const RemoveInputSchema = z.strictObject(removeFields).refine(notBoth, notBothMessage);
/** `link`: bind the reference `ref` (`layer:name` as shown) in the target's text to the definition `to`. */
export const LinkInputSchema = z.strictObject({
  qname: z.string(),
  ref: z.string(),
  to: z.string(),
  task: Task,
});
/** `unlink`: drop the binding of the reference `ref` (`layer:name` as shown) in the target's text. */
export const UnlinkInputSchema = z.strictObject({ qname: z.string(), ref: z.string(), task: Task });

/**
 * The §9.3.2 fields a bundle item may carry (bundle-form.ts): `author` must be the store's,
 * `ts` is informative (the store stamps the time it stores the op), and each `depends-on` entry
 * (`layer:name@h:<hash>`) must still hold: that definition's hash now, or the item is refused.
 */
const specFields = {
  author: z.string().max(128).optional(),
  ts: z.number().int().nonnegative().optional(),
  "depends-on": z
    .array(
      z
        .string()
        .regex(
          /^[a-z]+:[A-Za-z][A-Za-z0-9_-]*@h:[0-9a-f]{64}$/,
          "a depends-on entry is layer:name@h:<64 hex digits>",
        ),
    )
    .max(1_000)
    .optional(),
};

/**
 * One item of a bundle: an input of one write kind, tagged with `op`. Items in the words of
 * §9.3.2 (`layer` and `name` for any kind, `new-name`) are brought to this form first (see
 * `canonicalItem`).
 */
export const BundleItemSchema = z.discriminatedUnion("op", [
  z.strictObject({
    op: z.literal("add"),
    layer: z.string().optional(),
    name: z.string().optional(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({
    op: z.literal("replace"),
    qname: z.string(),
    body: Text.optional(),
    source: Text.optional(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({
    op: z.literal("edit"),
    qname: z.string(),
    patch: EditInputSchema.shape.patch,
    task: Task,
    ...specFields,
  }),
  z.strictObject({
    op: z.literal("rename"),
    qname: z.string(),
    newName: z.string(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({ op: z.literal("remove"), ...removeFields, ...specFields }).refine(notBoth, notBothMessage),
  z.strictObject({
    op: z.literal("link"),
    qname: z.string(),
    ref: z.string(),
    to: z.string(),
    task: Task,
    ...specFields,
  }),
  z.strictObject({ op: z.literal("unlink"), qname: z.string(), ref: z.string(), task: Task, ...specFields }),
]);
/**
 * Items one bundle takes at most: an import is one bundle of an item per definition, so this is
 * also the largest program one import takes (it was 10,000, which refused the 20,000-definition
 * programs issue 42 measures; 100,000 items of a definition each fit one sync server change).
 */
export const MAX_BUNDLE_ITEMS = 100_000;

/** A bundle: items applied all or nothing, in order (`{ops: [...]}` or the array itself). */
export const BundleSchema = z.union([
  z.strictObject({ ops: z.array(BundleItemSchema).max(MAX_BUNDLE_ITEMS) }),
  z.array(BundleItemSchema).max(MAX_BUNDLE_ITEMS),
]);

/**
 * What `add` takes. `layer` is typed as a {@link Layer} (the schema still checks it at run time,
 * with a message naming the layers, for callers that pass what a person typed).
 */
export type AddInput = Omit<z.input<typeof AddInputSchema>, "layer"> & { readonly layer?: Layer };
/** What `replace` takes: the definition (`qname`) and its whole new text after the name. */
export type ReplaceInput = z.input<typeof ReplaceInputSchema>;
/** What `edit` takes: the definition and its patch (anchors, or `body:N` line instructions). */
export type EditInput = z.input<typeof EditInputSchema>;
/** What `rename` takes: the definition and its new name (same layer). */
export type RenameInput = z.input<typeof RenameInputSchema>;
/** What `remove` takes: the definition, and `cascade` or `force` for its referrers. */
export type RemoveInput = z.input<typeof RemoveInputSchema>;
/** What `link` takes: the definition, the reference in its text, and the definition to bind it to. */
export type LinkInput = z.input<typeof LinkInputSchema>;
/** What `unlink` takes: the definition and the reference whose binding to drop. */
export type UnlinkInput = z.input<typeof UnlinkInputSchema>;
/** One item of a bundle (`apply`, `preview`): an add, replace, edit, rename, remove, link or unlink, by `op`. */
export type BundleItem = z.input<typeof BundleItemSchema>;

/** A store-form item `T` in §9.3.2's words: the target as `layer` + `name`, a new name as `new-name`. */
export type SpecForm<T> = T extends { readonly qname: string }
  ? Omit<T, "qname" | "newName"> & { readonly layer: Layer; readonly name: string } & (T extends {
        readonly op: "rename";
      }
        ? { readonly "new-name": string }
        : unknown)
  : never;

/**
 * A bundle item in the words of ai-edit.md §9.3.2: any kind names its target with `layer` and
 * `name`, a rename its new name with `new-name` (the store brings it to a {@link BundleItem}).
 */
export type SpecBundleItem = SpecForm<BundleItem>;

/**
 * What `Store.apply` and `Store.preview` take: items in either form, as an array or as
 * `{ ops: [...] }`. Checked again at run time (a value from JSON is cast to it, and a bad item is
 * refused by its place and field).
 */
export type BundleInput =
  | readonly (BundleItem | SpecBundleItem)[]
  | { readonly ops: readonly (BundleItem | SpecBundleItem)[] };

/**
 * What `Store.ingest` takes: ops written elsewhere, one or many, each a JSON object with its
 * `op-id` and whatever else it carries — the wire format, or ai-edit.md §9.3.2's form without `def`
 * and `refs`. Checked at run time as a set (a value from JSON is cast to it).
 */
export type IngestInput<T extends StoredOp = StoredOp> = T | readonly T[];

/** A schema issue in our words: limits by name and number, not the schema library's phrasing. */
export function issueMessage(i: z.core.$ZodIssue): string {
  if (i.code === "too_big" || i.code === "too_small") {
    const n = Number(i.code === "too_big" ? i.maximum : i.minimum).toLocaleString("en");
    const unit = i.origin === "string" ? "characters" : i.origin === "array" ? "entries" : "";
    const big = i.code === "too_big";
    const limit =
      big && i.origin === "string" && Number(i.maximum) === OP_LIMITS.bodyChars
        ? " (the bodyChars limit: split the definition)"
        : big && i.origin === "array" && Number(i.maximum) === MAX_BUNDLE_ITEMS
          ? " (a bundle's limit: apply the items in several bundles, one after another)"
          : "";
    return big ? `too long: at most ${n} ${unit}${limit}` : `too short: at least ${n} ${unit}`;
  }
  return i.message;
}

export function invalidInput(what: string, error: z.ZodError): Rejection {
  const issues = error.issues.map((i) => ({ path: i.path.map(String), message: issueMessage(i) }));
  const first = issues[0];
  return {
    code: "invalid-input",
    message: `invalid ${what}: ${first === undefined ? "" : `${first.path.join(".") || "(input)"}: ${first.message}`}`,
    details: { issues },
  };
}

/**
 * A bundle that fails its schema, by the item at fault: `item 2 (add): layer: …`, and an unknown
 * op kind by the kinds there are.
 */
export function bundleInputError(items: readonly unknown[], bare: boolean, error: z.ZodError): Rejection {
  const issue = error.issues.find((i) => i.code !== "invalid_union" || i.path.length > 0) ?? error.issues[0];
  const path = (issue?.path ?? []).map(String);
  const at = bare ? path : path[0] === "ops" ? path.slice(1) : path;
  const index = at.length > 0 && /^\d+$/.test(at[0]!) ? Number(at[0]) : undefined;
  if (issue === undefined || index === undefined) return invalidInput("bundle", error);
  const op = (items[index] as { op?: unknown } | null)?.op;
  const field = at.slice(1).join(".");
  const what =
    field === "op" && issue.code === "invalid_union"
      ? `"op" must be one of ${OP_KINDS.join(", ")}${op === undefined ? "" : ` (got ${quoted(op)})`}`
      : issue.code === "unrecognized_keys" && field === ""
        ? `unknown field ${quoted(issue.keys[0])}`
        : `${field === "" ? "(item)" : field}: ${issueMessage(issue)}`;
  return {
    code: "invalid-input",
    message: `invalid bundle: item ${index + 1}${typeof op === "string" && field !== "op" ? ` (${op})` : ""}: ${what}`,
    details: {
      item: index,
      issues: error.issues.map((i) => ({ path: i.path.map(String), message: issueMessage(i) })),
    },
  };
}
