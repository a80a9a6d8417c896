/**
 * A name defined twice has a way back (E0007's auto-patch, check/duplicate-patch.ts): one
 * `patch apply` of the diagnostic leaves one definition, in the first one's place and with its
 * comments, holding the text that showed, with every reference bound to it. Over every
 * duplicate-def program of ../shared/kumiki/conformance (a definition pasted twice): after the
 * repair, export and check equal the base program's. And for two different texts under one name
 * (a mutation of apps/05 made here): the later text is kept where the name was first defined,
 * its referrers keep reading it, and the graph checks as that program imported clean.
 */
import fs from "node:fs";
import path from "node:path";
import {
  brokenCases,
  conformanceRoot,
  corpusProgram,
  hasConformance,
  hasCorpus,
  kumikiShared,
} from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import type { Diagnostic } from "../../src/check/diagnostic.js";
import { normalizePatch } from "../../src/fix/normalize.js";
import { checkStore } from "../../src/integrity/store-check.js";
import { exportProgram } from "../../src/project/program.js";
import type { Store } from "../../src/store/store.js";
import { brokenStoreOf, capsOf } from "../support/broken-store.js";

/** Applies a diagnostic's auto-patch as `kumiki patch apply` does (the diagnostic itself given). */
async function applyPatchOf(store: Store, d: Diagnostic): Promise<void> {
  const items = normalizePatch(JSON.parse(JSON.stringify(d)));
  if (!items.ok) throw new Error(items.error.message);
  const r = await store.apply(items.value);
  if (!r.ok) throw new Error(`${d.location}: ${r.error.message}`);
}

/** What a check says, without the identities (which differ between two imports). */
function codes(store: Store, caps: Parameters<typeof checkStore>[1] = {}): string[] {
  return checkStore(store, caps).diagnostics.map((d) => `${d.code} ${d.location}`);
}

const dupCases = hasConformance ? brokenCases().filter((c) => c.kind === "duplicate-def") : [];

describe.skipIf(!hasConformance)(
  "E0007's auto-patch over the conformance corpus",
  { timeout: 120_000 },
  () => {
    it("repairs every duplicate-def program to its base: export and check equal, one patch each", async () => {
      let repaired = 0;
      for (const c of dupCases) {
        const caps = capsOf(c);
        const options = caps === undefined ? {} : { capabilities: caps };
        const store = await brokenStoreOf(fs.readFileSync(path.join(conformanceRoot, c.file), "utf8"), caps);
        const dups = checkStore(store, options).diagnostics.filter((d) => d.code === "E0007");
        expect(dups.length, c.file).toBe(1);
        expect(dups[0]!["auto-patch"], c.file).toBeDefined();
        await applyPatchOf(store, dups[0]!);
        const baseText = fs.readFileSync(path.join(kumikiShared, "examples", c.base), "utf8");
        const base = await brokenStoreOf(baseText, caps);
        expect({ file: c.file, export: exportProgram(store) }).toEqual({ file: c.file, export: baseText });
        expect({ file: c.file, check: codes(store, options) }).toEqual({
          file: c.file,
          check: codes(base, options),
        });
        repaired++;
      }
      expect(repaired).toBe(dupCases.length);
      expect(repaired).toBeGreaterThanOrEqual(30);
    });
  },
);

const app05 = hasCorpus ? corpusProgram("apps/05-project-management/app.kumiki") : undefined;

describe.skipIf(app05 === undefined)("two different texts under one name", () => {
  it("keeps the later text in the first one's place, its referrers bound to it", async () => {
    const source = app05!.source;
    const first = "slot draftTask";
    const at = source.indexOf(first);
    expect(at).toBeGreaterThan(0);
    const end = source.indexOf("\n", at);
    const original = source.slice(at, end);
    // The same slot again, later in the file, with another initial value (same type: the program
    // stays sound either way, and which text is kept is what the export shows).
    const later = original.replace('assignee: ""', 'assignee: "me"');
    expect(later).not.toBe(original);
    const pasted = `${source.trimEnd()}\n\n${later}\n`;
    const store = await brokenStoreOf(pasted, undefined);
    const before = checkStore(store).diagnostics.filter((d) => d.code === "E0007");
    expect(before.map((d) => d.location)).toEqual(["slot.draftTask.body:1"]);
    const patch = before[0]!["auto-patch"] as { op: string; ops: readonly { op: string }[] };
    expect(patch.op).toBe("bundle");
    expect(patch.ops[0]!.op).toBe("replace");
    expect(patch.ops.at(-1)!.op).toBe("remove");
    const links = patch.ops.filter((o) => o.op === "link").length;
    expect(links).toBeGreaterThan(3);
    await applyPatchOf(store, before[0]!);
    // The later text where the name was first defined; the pasted copy gone.
    const expected = source.replace(original, later);
    expect(exportProgram(store)).toBe(expected);
    const clean = await brokenStoreOf(expected, undefined);
    expect(codes(store)).toEqual(codes(clean));
    const refs = store.refs("slot.draftTask");
    expect(refs.ok && refs.value.referrers.length).toBe(links);
  });

  it("the issue's case: slot tasks as a Map, then again as an Int — the Int's errors are told, and the repair keeps it", async () => {
    const source = app05!.source;
    const pasted = `${source.trimEnd()}\n\nslot tasks : Int = 0\n`;
    const store = await brokenStoreOf(pasted, undefined);
    const before = checkStore(store).diagnostics;
    // The text reads `tasks` as the Int: its uses as a Map are errors, beside E0007.
    expect(before.filter((d) => d.code === "E0007").length).toBe(1);
    const typeErrors = before.filter((d) => d.code === "E0201").length;
    expect(typeErrors).toBeGreaterThan(30);
    await applyPatchOf(store, before.find((d) => d.code === "E0007")!);
    const expected = source.replace(/slot tasks +: Map\(TaskId, Task\) += \{\}/, "slot tasks : Int = 0");
    expect(exportProgram(store)).toBe(expected);
    const clean = await brokenStoreOf(expected, undefined);
    expect(codes(store)).toEqual(codes(clean));
    expect(codes(store).length).toBe(typeErrors);
  });
});
