/**
 * A whole .kumiki program in and out of the store: `importProgram` (one atomic bundle, a program
 * with errors included) and `exportProgram` (byte for byte when unedited).
 */
import type { DefinitionState } from "../graph/graph.js";
import type { GraphReader } from "../graph/reader.js";
import { splitProgram, splitProgramTolerant } from "../lang/split.js";
import { type BundleItem, MAX_BUNDLE_ITEMS } from "../store/inputs.js";
import { reject, type StoreResult } from "../store/result.js";
import type { Store } from "../store/store.js";
import type { WriteReceipt } from "../store/store-types.js";

/** How {@link importProgram} runs. */
export interface ImportOptions {
  /** The task every op of the import is tagged with. */
  readonly task?: string;
  /**
   * Told `(0, n)` once the text is split into its `n` definitions, `(k, n)` as they are read (about a
   * hundred times, whatever `n`), and `(n, n)` again once they are checked and stored.
   */
  readonly onProgress?: (done: number, total: number) => void;
  /**
   * Refuse a program with errors (the store's write gate judges it like any write). By default
   * the import is faithful: a program imports with its errors (references to names nothing
   * defines stored unbound, a definition that does not parse stored as its text, a name defined
   * twice kept twice, type errors as written), for `check` and `fix` to repair.
   */
  readonly strict?: boolean;
}

/**
 * Imports a whole .kumiki program as one atomic bundle: every definition is added with its exact
 * text, and the text between definitions (blank lines, section banners) goes with the definition
 * that follows it, the text after the last definition with the last one. So
 * {@link exportProgram} gives an unedited imported program back byte for byte. Faithful by
 * default: a program with errors imports as written (a reference to a name nothing defines is
 * stored unbound; `check` reports it with its did-you-mean and auto-patch), so the repair loop of
 * §9.6.2 can start from it; a definition that does not parse is stored as its text, its layer
 * and name read off its first line (`check` reports E0008 with the parse error; replace or edit
 * it like any other). `strict` refuses such a program instead. Refused, with nothing written,
 * when text other than comments comes before the first definition or (with `strict`) anything
 * does not parse (`parse-error`, with line and column), when the program holds no definition
 * (`program-empty`), or when the store refuses a definition (a name the graph already held: the
 * store's code, with the definition's line).
 */
export async function importProgram(
  store: Store,
  text: string,
  options: ImportOptions = {},
): Promise<StoreResult<WriteReceipt>> {
  // Faithful: a definition that does not parse is kept as its text (check reports E0008);
  // strict refuses the program at its first parse error.
  const split = options.strict === true ? splitProgram(text) : splitProgramTolerant(text);
  if (!split.ok) {
    const { span, message } = split.error;
    const line = text.split("\n")[span.line - 1] ?? "";
    return reject(
      "parse-error",
      `the program does not parse: ${message}\n  ${line}\n  ${" ".repeat(Math.max(0, span.column - 1))}^\nnothing was imported`,
      { line: span.line, column: span.column, offset: span.offset },
    );
  }
  const items: { op: "add"; source: string; task?: string }[] = [];
  const lines: number[] = [];
  const names: string[] = [];
  let pending = "";
  for (const piece of split.value) {
    if (piece.kind === "trivia") {
      pending += piece.text;
      continue;
    }
    items.push({
      op: "add",
      source: pending + piece.text,
      ...(options.task === undefined ? {} : { task: options.task }),
    });
    lines.push(piece.line);
    names.push(`${piece.layer}.${piece.name}`);
    pending = "";
  }
  const last = items[items.length - 1];
  if (last === undefined)
    return reject("program-empty", "the program holds no definition; nothing was imported");
  last.source += pending;
  if (items.length > MAX_BUNDLE_ITEMS) {
    return reject(
      "invalid-input",
      `the program holds ${items.length.toLocaleString("en")} definitions; one import takes at most ${MAX_BUNDLE_ITEMS.toLocaleString("en")}: split it and import the parts one after another, each after the parts it references; nothing was imported`,
      { definitions: items.length, limit: MAX_BUNDLE_ITEMS },
    );
  }
  options.onProgress?.(0, items.length);
  // About a hundred steps, whatever the size: a 5,000-definition import moves by 50 at a time.
  const step = Math.max(1, Math.floor(items.length / 100));
  const progress = options.onProgress;
  const r = await store.apply(
    { ops: items satisfies BundleItem[] },
    {
      keepErrors: options.strict !== true,
      ...(progress === undefined
        ? {}
        : {
            onProgress: (done: number, total: number) =>
              done % step === 0 ? progress(done, total) : undefined,
          }),
    },
  );
  if (!r.ok) {
    const index = r.error.details?.item;
    const at =
      typeof index === "number" && names[index] !== undefined
        ? ` (${names[index]} at line ${lines[index]})`
        : "";
    return {
      ok: false,
      error: {
        ...r.error,
        message: `cannot import${at}: ${r.error.message}; nothing was imported`,
        details: { ...r.error.details, ...(at === "" ? {} : { line: lines[index as number] }) },
      },
    };
  }
  options.onProgress?.(items.length, items.length);
  return r;
}

/**
 * The definitions a projection shows, in program order: every live definition that shows under
 * its name, oldest identity first. An identity is the op-id of the add that created it, so this
 * is the order of import, and definitions added later follow in the order they were added (a
 * rename or an edit keeps a definition's place; a remove and a new add of the name moves it last).
 * With `hidden`, also the live definitions a name conflict hides (a second definition of a name),
 * in their place: what a program text must hold so that nothing live is left out.
 */
export function programOrder(reader: GraphReader, options: { hidden?: boolean } = {}): DefinitionState[] {
  const g = reader.graph;
  return [...g.definitions()]
    .filter((s) => (options.hidden === true ? s.alive : g.isVisible(s.def)))
    .sort((a, b) => (a.def < b.def ? -1 : a.def > b.def ? 1 : 0));
}

/**
 * The whole graph as one .kumiki program: every live definition (`programOrder`, hidden ones
 * included: a definition a same-name conflict hides is kept in the text, where `check` reports the
 * duplicate as E0007, rather than silently left out), each with its text and current names, one
 * after another. An unedited imported program comes back byte for byte, a program that defines a
 * name twice included. A line break is put between two texts only where they would otherwise run
 * together (the first ends without one and the second does not start with a blank).
 */
export function exportProgram(store: Store): string {
  const reader = store.read();
  // Parts joined once, and the break decided from the last line alone: asking the growing string
  // (`out += text; out.endsWith(…)`) flattened it every time, which made export quadratic (4 s at
  // 5,000 definitions against 0.2 s for view).
  const parts: string[] = [];
  let lastLine: string | undefined;
  for (const s of programOrder(reader, { hidden: true })) {
    const text = reader.materializer.render(s);
    const broken = lastLine !== undefined && needsBreak(lastLine, text);
    if (broken) parts.push("\n");
    parts.push(text);
    const nl = text.lastIndexOf("\n");
    lastLine = nl >= 0 ? text.slice(nl + 1) : (broken ? "" : (lastLine ?? "")) + text;
  }
  return parts.join("");
}

/**
 * True when `next` cannot follow text whose last line is `lastLine` directly: the two would join
 * into one line wrongly.
 */
function needsBreak(lastLine: string, next: string): boolean {
  if (lastLine === "") return false;
  const c = next.charCodeAt(0);
  if (c === 10 || (c === 13 && next.charCodeAt(1) === 10)) return false;
  // Same-line definitions (`type A = Int  type B = Int`) split with the blank in the second text;
  // after a trailing comment, though, even a blank would leave the next definition commented out.
  return !((c === 32 || c === 9) && !lastLine.includes("#"));
}
