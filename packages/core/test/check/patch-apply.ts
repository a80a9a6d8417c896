import type { AutoPatch, AutoPatchOp } from "../../src/check/diagnostic.js";
import { parseProgram } from "../../src/lang/parser.js";

/**
 * Applies an auto-patch to a loose program's text the way the op model is meant to: an `edit`
 * replaces its anchor, which must occur exactly once on line N of the definition (counted from the
 * line of its layer keyword); an `add` appends a definition. Test support only — the real
 * application is the op model's.
 */
export function applyAutoPatch(source: string, patch: AutoPatch): string {
  if (patch.op === "bundle") return patch.ops.reduce(applyOp, source);
  return applyOp(source, patch);
}

function applyOp(source: string, op: AutoPatchOp): string {
  if (op.op === "add") {
    const sep = op.layer === "tile" || op.layer === "type" ? " = " : " ";
    return `${source.replace(/\n*$/, "\n")}\n${op.layer} ${op.name}${sep}${op.body}\n`;
  }
  // A loose program has no identities: the ops naming definitions by id (E0007's) are the store's.
  if (op.op !== "edit") throw new Error(`a ${op.op} auto-patch applies to a store only`);
  const parsed = parseProgram(source);
  if (!parsed.ok) throw new Error(parsed.error.message);
  const def = parsed.value.definitions.find((d) => d.layer === op.layer && d.name.name === op.name);
  if (def === undefined) throw new Error(`no ${op.layer}.${op.name}`);
  let out = source;
  for (const [key, instruction] of Object.entries(op.patch)) {
    const m = /^body:(\d+)$/.exec(key);
    const r = /^replace '([^']*)' -> '([^']*)'$/.exec(instruction);
    if (m === null || r === null) throw new Error(`unsupported patch ${key}: ${instruction}`);
    const line = def.span.line + Number(m[1]) - 1;
    const lines = out.split("\n");
    const text = lines[line - 1];
    if (text === undefined) throw new Error(`no line ${line}`);
    const [, from, to] = r as unknown as [string, string, string];
    const count = text.split(from).length - 1;
    if (count !== 1) throw new Error(`anchor '${from}' occurs ${count} times on line ${line}: ${text}`);
    lines[line - 1] = text.replace(from, to);
    out = lines.join("\n");
  }
  return out;
}
