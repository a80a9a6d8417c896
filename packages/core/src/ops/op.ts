/**
 * The op of ai-edit.md §9.3.2 as a union on `op`: its zod schema with messages, and a fast hand-
 * written check that agrees with it.
 */
import { z } from "zod";
import { isLayer, LAYERS, type Layer } from "../lang/layers.js";
import { KEYWORDS } from "../lang/lexer.js";
import {
  type AuthorId,
  AuthorIdSchema,
  type DefId,
  DefIdSchema,
  defIdOf,
  isAuthorId,
  isDefId,
  isOpId,
  type OpId,
  OpIdSchema,
} from "./ids.js";

/** The seven op kinds of ai-edit.md §9.3.1. */
export const OP_KINDS = ["add", "replace", "edit", "rename", "remove", "link", "unlink"] as const;

/** One of {@link OP_KINDS}. */
export type OpKind = (typeof OP_KINDS)[number];

/**
 * The kinds of control op: state of the graph itself rather than of a definition, replicated like
 * every op — `config` (the conflict policy, ai-edit.md §9.4.2) and `lock` / `unlock` (ownership
 * locks, §9.8.3). See docs/semantics.md §11.
 */
export const CONTROL_OP_KINDS = ["config", "lock", "unlock"] as const;

/** One of {@link CONTROL_OP_KINDS}. */
export type ControlOpKind = (typeof CONTROL_OP_KINDS)[number];

/** Any kind an op in the log may have. */
export type LogOpKind = OpKind | ControlOpKind;

/**
 * How a reference left dangling by concurrent ops is resolved (ai-edit.md §9.4.2): `strict` rolls
 * back both sides, `heal` brings the removed definition back, `warn` keeps both and records it.
 */
export const CONFLICT_POLICIES = ["strict", "heal", "warn"] as const;

/** One of {@link CONFLICT_POLICIES}. */
export type ConflictPolicy = (typeof CONFLICT_POLICIES)[number];

/** True when `s` names a {@link ConflictPolicy}. */
export function isConflictPolicy(s: unknown): s is ConflictPolicy {
  return typeof s === "string" && (CONFLICT_POLICIES as readonly string[]).includes(s);
}

/** The keys a `config` op can set, and the graph's value for each when no op set it. */
export const CONFIG_DEFAULTS = { "conflict-policy": "strict" } as const satisfies Record<
  string,
  ConflictPolicy
>;

/** A key of {@link CONFIG_DEFAULTS}. */
export type ConfigKey = keyof typeof CONFIG_DEFAULTS;

/** Limits on one op, reported by name when exceeded. */
export const OP_LIMITS = {
  /** Characters of a definition's text (head, name and body together). */
  bodyChars: 1_000_000,
  /** Anchors of one edit. */
  anchors: 256,
  /** Parent op-ids of one op. */
  parents: 1024,
  /** Reference bindings (`refs`) and `depends-on` entries of one op. */
  refs: 4096,
  /** Characters of a task id. */
  taskChars: 128,
  /** Patterns of one lock or unlock op. */
  lockPatterns: 256,
  /** Characters of one lock pattern. */
  lockPatternChars: 128,
} as const;

/** Words the language reserves (language.md §1.2.2, as the lexer reads them): never a definition's name. */
export const RESERVED_WORDS: ReadonlySet<string> = KEYWORDS;

const NAME_RE = /^[a-zA-Z][a-zA-Z0-9_-]{0,31}$/;
const REF_KEY_RE = new RegExp(`^(${LAYERS.join("|")}):[a-zA-Z][a-zA-Z0-9_-]{0,31}$`);
const DEPENDS_ON_RE = new RegExp(`^(${LAYERS.join("|")}):[a-zA-Z][a-zA-Z0-9_-]{0,31}@h:[0-9a-f]{64}$`);
/** DEPENDS_ON_RE without the layer alternation (the layer is checked apart): a cheaper test. */
const DEPENDS_ON_SHAPE_RE = /^([a-z]+):[a-zA-Z][a-zA-Z0-9_-]{0,31}@h:[0-9a-f]{64}$/;
const TASK_RE = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/;
const LOCK_PATTERN_RE = new RegExp(`^(\\*|${LAYERS.join("|")})\\.[a-zA-Z*][a-zA-Z0-9_*-]*$`);

/**
 * True when `s` is a lock pattern: `layer.namepattern` (`slot.todos*`, `reducer.todo-*`,
 * `*.draft`), where `*` — the only special character — matches any run of characters.
 */
export function isLockPattern(s: unknown): s is string {
  return typeof s === "string" && s.length <= OP_LIMITS.lockPatternChars && LOCK_PATTERN_RE.test(s);
}

/** True when `s` is a definition name: an identifier of at most 32 characters, not a reserved word. */
export function isDefinitionName(s: unknown): s is string {
  return typeof s === "string" && NAME_RE.test(s) && !RESERVED_WORDS.has(s);
}

/**
 * A reference key, `layer:name`: how a definition's text names a definition it references. The
 * `refs` of an op bind each key its text uses to a definition identity.
 */
export type RefKey = `${Layer}:${string}`;

/** True when `s` is a {@link RefKey}. */
export function isRefKey(s: unknown): s is RefKey {
  return typeof s === "string" && REF_KEY_RE.test(s);
}

/** The key of a reference to `name` in `layer`. */
export function refKey(layer: Layer, name: string): RefKey {
  return `${layer}:${name}` as RefKey;
}

/** The layer and name of a {@link RefKey}. */
export function splitRefKey(key: RefKey): { layer: Layer; name: string } {
  const i = key.indexOf(":");
  return { layer: key.slice(0, i) as Layer, name: key.slice(i + 1) };
}

/** Reference key → identity of the definition it resolved to when the op was written. */
export type RefBindings = Readonly<Record<RefKey, DefId>>;

/** One anchor of an edit: `find` must occur exactly once (trailing whitespace on a line tolerated). */
export interface Anchor {
  readonly find: string;
  readonly replace: string;
}

/** What every definition op carries: its layer, and the task and revert it belongs to. */
export interface OpBase {
  readonly layer: Layer;
  /** The target's name when the op was written (for a person reading the log; identity is `def`). */
  readonly name: string;
  readonly author: AuthorId;
  /** Issue time, UNIX milliseconds. */
  readonly ts: number;
  readonly "op-id": OpId;
  /** The author's heads when the op was written: everything the op was written against. */
  readonly "parent-ops": readonly OpId[];
  /** `layer:name@h:<hash>` of each definition the text references, as it was when written. */
  readonly "depends-on": readonly string[];
  /** The identity of the definition the op targets. */
  readonly def: DefId;
  /** The task the op belongs to, when the author gave one. */
  readonly task?: string;
  /** The op this op reverts, when it was written by `revert`. */
  readonly reverts?: OpId;
}

/** What an op that sets a definition's text carries: the text and how its references are bound. */
export interface BodyFields {
  /** The definition's text after its name, byte for byte (see {@link composeSource}). */
  readonly body: string;
  /** The text before the name when it is not `<layer> ` (leading comments, unusual spacing). */
  readonly head?: string;
  /** The identity each reference key of the text resolved to when the op was written. */
  readonly refs: RefBindings;
}

/** Adds a definition; its identity is minted from its op-id. */
export interface AddOp extends OpBase, BodyFields {
  readonly op: "add";
}
/** Replaces a definition's whole text. */
export interface ReplaceOp extends OpBase, BodyFields {
  readonly op: "replace";
}
/** Edits part of a definition's text; `body`/`head`/`refs` are the result the author saw. */
export interface EditOp extends OpBase, BodyFields {
  readonly op: "edit";
  readonly patch: readonly Anchor[];
  /** The op whose result the patch was written against (the definition's version then). */
  readonly base: OpId;
}
/** Renames a definition: a label change; no text, hash or dependent changes. */
export interface RenameOp extends OpBase {
  readonly op: "rename";
  readonly "new-name": string;
}
/** Removes a definition (observed-remove: it removes what its author had seen). */
export interface RemoveOp extends OpBase {
  readonly op: "remove";
  /**
   * Written knowing it leaves references dangling (`remove --force`, and the removes inside a
   * cascade): the references its author saw are not a conflict (docs/semantics.md §5).
   */
  readonly force?: true;
}
/** Binds a reference key of the definition's text to a definition identity (pins it). */
export interface LinkOp extends OpBase {
  readonly op: "link";
  readonly ref: RefKey;
  readonly target: DefId;
}
/** Drops the binding of a reference key: those sites resolve to nothing. */
export interface UnlinkOp extends OpBase {
  readonly op: "unlink";
  readonly ref: RefKey;
}

/** One op: the §9.3.2 wire format plus what the model needs (see docs/semantics.md). */
export type Op = AddOp | ReplaceOp | EditOp | RenameOp | RemoveOp | LinkOp | UnlinkOp;

/** What every control op (config, lock, unlock) carries: who wrote it, when, and its place in the log. */
export interface ControlBase {
  readonly author: AuthorId;
  /** Issue time, UNIX milliseconds. */
  readonly ts: number;
  readonly "op-id": OpId;
  readonly "parent-ops": readonly OpId[];
  readonly task?: string;
}

/** Sets a setting of the graph: the conflict policy. */
export interface ConfigOp extends ControlBase {
  readonly op: "config";
  readonly key: ConfigKey;
  readonly value: ConflictPolicy;
}

/** Gives `agent` ownership of the definitions matching `patterns`: others' writes to them are refused. */
export interface LockOp extends ControlBase {
  readonly op: "lock";
  readonly agent: AuthorId;
  readonly patterns: readonly string[];
}

/** Ends `agent`'s locks on `patterns` (all of its locks when absent) that its author had seen. */
export interface UnlockOp extends ControlBase {
  readonly op: "unlock";
  readonly agent: AuthorId;
  readonly patterns?: readonly string[];
}

/** An op about the graph rather than one definition. */
export type ControlOp = ConfigOp | LockOp | UnlockOp;

/** Any op a log holds: a definition op or a control op. */
export type LogOp = Op | ControlOp;

/** True for a control op (config, lock, unlock). */
export function isControlOp(op: LogOp): op is ControlOp {
  return op.op === "config" || op.op === "lock" || op.op === "unlock";
}

/** True for an op on one definition (the seven kinds of §9.3.1). */
export function isDefinitionOp(op: LogOp): op is Op {
  return !isControlOp(op);
}

/** The ops that write a definition's whole text. */
export type BodyOp = AddOp | ReplaceOp | EditOp;

// ---------------------------------------------------------------------------------------------
// The zod schema: the wire format's definition, with messages. `parseOp` answers most ops with a
// hand-written check that accepts exactly what the schema accepts (test/ops/op.property.test.ts proves the
// two agree on generated ops), because the schema costs ~3 µs an op and opening 100k ops must not
// spend a third of its budget on validation.
// ---------------------------------------------------------------------------------------------

const NameSchema = z
  .string()
  .regex(NAME_RE, "a name is a letter then letters, digits, _ or -, at most 32 characters")
  .refine((s) => !RESERVED_WORDS.has(s), "a name is not a reserved word");
const LayerSchema = z.enum(LAYERS);
const RefKeySchema = z
  .string()
  .regex(REF_KEY_RE, "a reference key is layer:name, e.g. slot:todos")
  .transform((s) => s as RefKey);

const base = {
  layer: LayerSchema,
  name: NameSchema,
  author: AuthorIdSchema,
  ts: z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER),
  "op-id": OpIdSchema,
  "parent-ops": z
    .array(OpIdSchema)
    .max(OP_LIMITS.parents, `at most ${OP_LIMITS.parents} parent ops`)
    .refine((ps) => new Set(ps).size === ps.length, "parent-ops holds no op twice"),
  "depends-on": z
    .array(z.string().regex(DEPENDS_ON_RE, "a depends-on entry is layer:name@h:<64 hex digits>"))
    .max(OP_LIMITS.refs, `at most ${OP_LIMITS.refs} depends-on entries`),
  def: DefIdSchema,
  task: z
    .string()
    .min(1)
    .max(OP_LIMITS.taskChars, `a task id has at most ${OP_LIMITS.taskChars} characters`)
    .regex(TASK_RE, "a task id is letters, digits and . _ : @ / + - (no spaces)")
    .optional(),
  reverts: OpIdSchema.optional(),
};

const bodyFields = {
  body: z.string(),
  head: z.string().optional(),
  refs: z
    .record(RefKeySchema, DefIdSchema)
    .refine((r) => Object.keys(r).length <= OP_LIMITS.refs, `at most ${OP_LIMITS.refs} reference bindings`),
};

const textFits = (o: { body: string; head?: string | undefined; name: string }) =>
  o.body.length + (o.head?.length ?? 0) + o.name.length <= OP_LIMITS.bodyChars;
const textFitsMessage = `a definition's text has at most ${OP_LIMITS.bodyChars} characters`;

const AnchorSchema = z.strictObject({
  find: z.string().min(1, "an anchor's find text is not empty"),
  replace: z.string(),
});

const AddSchema = z
  .strictObject({ op: z.literal("add"), ...base, ...bodyFields })
  .refine(textFits, textFitsMessage)
  .refine((o) => o.def === defIdOf(o["op-id"]), {
    message: "an add's def is def_ and the ULID of its own op-id",
    path: ["def"],
  });
const ReplaceSchema = z
  .strictObject({ op: z.literal("replace"), ...base, ...bodyFields })
  .refine(textFits, textFitsMessage);
const EditSchema = z
  .strictObject({
    op: z.literal("edit"),
    ...base,
    ...bodyFields,
    patch: z
      .array(AnchorSchema)
      .min(1, "an edit has at least one anchor")
      .max(OP_LIMITS.anchors, `an edit has at most ${OP_LIMITS.anchors} anchors`),
    base: OpIdSchema,
  })
  .refine(textFits, textFitsMessage);
const RenameSchema = z.strictObject({ op: z.literal("rename"), ...base, "new-name": NameSchema });
const RemoveSchema = z.strictObject({ op: z.literal("remove"), ...base, force: z.literal(true).optional() });
const LinkSchema = z.strictObject({ op: z.literal("link"), ...base, ref: RefKeySchema, target: DefIdSchema });
const UnlinkSchema = z.strictObject({ op: z.literal("unlink"), ...base, ref: RefKeySchema });

const controlBase = {
  author: base.author,
  ts: base.ts,
  "op-id": base["op-id"],
  "parent-ops": base["parent-ops"],
  task: base.task,
};
const LockPatternSchema = z
  .string()
  .max(OP_LIMITS.lockPatternChars, `a lock pattern has at most ${OP_LIMITS.lockPatternChars} characters`)
  .regex(LOCK_PATTERN_RE, "a lock pattern is layer.namepattern, e.g. slot.todos* (* is the only wildcard)");
const LockPatternsSchema = z
  .array(LockPatternSchema)
  .min(1, "a lock names at least one pattern")
  .max(OP_LIMITS.lockPatterns, `at most ${OP_LIMITS.lockPatterns} patterns`);
const ConfigSchema = z.strictObject({
  op: z.literal("config"),
  ...controlBase,
  key: z.literal("conflict-policy"),
  value: z.enum(CONFLICT_POLICIES),
});
const LockSchema = z.strictObject({
  op: z.literal("lock"),
  ...controlBase,
  agent: AuthorIdSchema,
  patterns: LockPatternsSchema,
});
const UnlockSchema = z.strictObject({
  op: z.literal("unlock"),
  ...controlBase,
  agent: AuthorIdSchema,
  patterns: LockPatternsSchema.optional(),
});

/** The wire schema of an op: a union on `op` (definition ops and control ops). */
export const OpSchema = z.discriminatedUnion("op", [
  AddSchema,
  ReplaceSchema,
  EditSchema,
  RenameSchema,
  RemoveSchema,
  LinkSchema,
  UnlinkSchema,
  ConfigSchema,
  LockSchema,
  UnlockSchema,
]);

// The schema's output must be a LogOp: a compile error here means the two drifted apart.
type SchemaOutput = z.output<typeof OpSchema>;
const _schemaIsOp: (o: SchemaOutput) => LogOp = (o) => o;
void _schemaIsOp;

/** Why an op was refused: a stable code, a message, and where in the op. */
export interface OpIssue {
  readonly code: "unknown-op-kind" | "invalid-op-id" | "invalid-op";
  readonly message: string;
  /** Field path of each problem (`["patch", 0, "find"]`). */
  readonly issues: readonly { readonly path: readonly (string | number)[]; readonly message: string }[];
}

/** Validates one op from the wire. */
export function parseOp(input: unknown): { ok: true; op: LogOp } | { ok: false; error: OpIssue } {
  if (isWireOp(input)) return { ok: true, op: input };
  const r = OpSchema.safeParse(input);
  if (r.success) return { ok: true, op: r.data };
  const issues = r.error.issues.map((i) => ({
    path: i.path.map((p) => (typeof p === "symbol" ? String(p) : p)),
    message: i.message,
  }));
  const kind = (input as { op?: unknown } | null)?.op;
  const opId = (input as { "op-id"?: unknown } | null)?.["op-id"];
  if (typeof kind !== "string" || !(ALL_KINDS as readonly string[]).includes(kind)) {
    return {
      ok: false,
      error: {
        code: "unknown-op-kind",
        message: `unknown op kind ${JSON.stringify(kind)}: an op is one of ${ALL_KINDS.join(", ")}`,
        issues,
      },
    };
  }
  if (!isOpId(opId)) {
    return {
      ok: false,
      error: {
        code: "invalid-op-id",
        message: `invalid op-id ${JSON.stringify(opId)}: an op-id is op_ followed by a 26-character Crockford ULID`,
        issues,
      },
    };
  }
  const first = issues[0];
  return {
    ok: false,
    error: {
      code: "invalid-op",
      message: `malformed ${kind} op ${opId}: ${first === undefined ? "invalid" : `${first.path.join(".") || "(op)"}: ${first.message}`}`,
      issues,
    },
  };
}

const ALL_KINDS: readonly LogOpKind[] = [...OP_KINDS, ...CONTROL_OP_KINDS];

const ALLOWED_KEYS: Readonly<Record<LogOpKind, ReadonlySet<string>>> = (() => {
  const common = [
    "op",
    "layer",
    "name",
    "author",
    "ts",
    "op-id",
    "parent-ops",
    "depends-on",
    "def",
    "task",
    "reverts",
  ];
  const body = ["body", "head", "refs"];
  const control = ["op", "author", "ts", "op-id", "parent-ops", "task"];
  return {
    add: new Set([...common, ...body]),
    replace: new Set([...common, ...body]),
    edit: new Set([...common, ...body, "patch", "base"]),
    rename: new Set([...common, "new-name"]),
    remove: new Set([...common, "force"]),
    link: new Set([...common, "ref", "target"]),
    unlink: new Set([...common, "ref"]),
    config: new Set([...control, "key", "value"]),
    lock: new Set([...control, "agent", "patterns"]),
    unlock: new Set([...control, "agent", "patterns"]),
  };
})();

function isPlainObject(x: unknown): x is Record<string, unknown> {
  if (x === null || typeof x !== "object" || Array.isArray(x)) return false;
  const proto = Object.getPrototypeOf(x);
  return proto === Object.prototype || proto === null;
}

function isLockPatterns(x: unknown): boolean {
  if (!Array.isArray(x) || x.length < 1 || x.length > OP_LIMITS.lockPatterns) return false;
  for (const p of x) if (!isLockPattern(p)) return false;
  return true;
}

/**
 * The version of what {@link isWireOp} accepts. A store that records "every op of this file passed
 * isWireOp" (op-log.jsonl's sidecar) records it with this version, and a reader takes the record
 * only when the versions are equal: its fold then skips the check for those ops. Bump it whenever
 * isWireOp (or a check it calls: ids, names, layers, limits) accepts an op it refused before or
 * refuses one it accepted; test/ops/wire-schema-version.test.ts pins what it is made of, to make
 * that a decision.
 */
export const WIRE_SCHEMA_VERSION = 1;

/** The fast check behind {@link parseOp}: true exactly when {@link OpSchema} accepts `x` unchanged. */
export function isWireOp(x: unknown): x is LogOp {
  if (!isPlainObject(x)) return false;
  const kind = x.op;
  if (typeof kind !== "string") return false;
  const allowed = ALLOWED_KEYS[kind as LogOpKind];
  if (allowed === undefined || !Object.hasOwn(ALLOWED_KEYS, kind)) return false;
  for (const k in x) if (!allowed.has(k)) return false;
  if (!isAuthorId(x.author)) return false;
  const ts = x.ts;
  if (typeof ts !== "number" || !Number.isSafeInteger(ts) || ts < 0) return false;
  if (!isOpId(x["op-id"])) return false;
  const parents = x["parent-ops"];
  if (!Array.isArray(parents) || parents.length > OP_LIMITS.parents) return false;
  for (const p of parents) if (!isOpId(p)) return false;
  if (parents.length > 1 && new Set(parents).size !== parents.length) return false;
  if (x.task !== undefined) {
    const t = x.task;
    if (typeof t !== "string" || t.length < 1 || t.length > OP_LIMITS.taskChars || !TASK_RE.test(t))
      return false;
  }
  switch (kind as LogOpKind) {
    case "config":
      return x.key === "conflict-policy" && isConflictPolicy(x.value);
    case "lock":
      return isAuthorId(x.agent) && isLockPatterns(x.patterns);
    case "unlock":
      return isAuthorId(x.agent) && (x.patterns === undefined || isLockPatterns(x.patterns));
    default:
      break;
  }
  if (typeof x.layer !== "string" || !isLayer(x.layer)) return false;
  if (!isDefinitionName(x.name)) return false;
  const deps = x["depends-on"];
  if (!Array.isArray(deps) || deps.length > OP_LIMITS.refs) return false;
  for (const d of deps) {
    if (typeof d !== "string" || !DEPENDS_ON_SHAPE_RE.test(d) || !isLayer(d.slice(0, d.indexOf(":"))))
      return false;
  }
  if (!isDefId(x.def)) return false;
  if (x.reverts !== undefined && !isOpId(x.reverts)) return false;
  switch (kind as OpKind) {
    case "add":
    case "replace":
    case "edit": {
      if (typeof x.body !== "string") return false;
      if (x.head !== undefined && typeof x.head !== "string") return false;
      if (x.body.length + ((x.head as string | undefined)?.length ?? 0) + x.name.length > OP_LIMITS.bodyChars)
        return false;
      const refs = x.refs;
      if (!isPlainObject(refs)) return false;
      let n = 0;
      for (const k in refs) {
        if (!isRefKey(k) || !isDefId(refs[k])) return false;
        n++;
      }
      if (n > OP_LIMITS.refs) return false;
      if (kind === "add" && x.def !== defIdOf(x["op-id"])) return false;
      if (kind === "edit") {
        const patch = x.patch;
        if (!Array.isArray(patch) || patch.length < 1 || patch.length > OP_LIMITS.anchors) return false;
        for (const a of patch) {
          if (!isPlainObject(a)) return false;
          for (const k in a) if (k !== "find" && k !== "replace") return false;
          if (typeof a.find !== "string" || a.find.length === 0 || typeof a.replace !== "string")
            return false;
        }
        if (!isOpId(x.base)) return false;
      }
      return true;
    }
    case "rename":
      return isDefinitionName(x["new-name"]);
    case "remove":
      return x.force === undefined || x.force === true;
    case "link":
      return isRefKey(x.ref) && isDefId(x.target);
    case "unlink":
      return isRefKey(x.ref);
  }
}

/** True for ops that write a definition's whole text (add, replace, edit). */
export function isBodyOp(op: Op): op is BodyOp {
  return op.op === "add" || op.op === "replace" || op.op === "edit";
}

/** `layer.name`, how a definition is named to a person. */
export function qnameOf(op: { layer: Layer; name: string }): string {
  return `${op.layer}.${op.name}`;
}
