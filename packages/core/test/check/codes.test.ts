import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { kumikiShared, repoRoot } from "@kumiki-graph/test-support/corpus";
import { describe, expect, it } from "vitest";
import { BANDS, CODES, codeInfo, narrowingOf, renderErrorsDoc } from "../../src/check/codes.js";

const specPath = join(kumikiShared, "spec", "errors.md");
const hasSpec = existsSync(specPath);

interface SpecCode {
  readonly code: string;
  readonly kinds: string[];
  readonly warning: boolean;
}

/** Every `### E0103 \`undef-ref\` / \`undef-slot\`` heading of errors.md. */
function specCodes(text: string): SpecCode[] {
  const out: SpecCode[] = [];
  for (const line of text.split("\n")) {
    const m = /^###\s+([EW]\d{4})\s+(.*)$/.exec(line);
    if (!m) continue;
    const rest = m[2]!;
    // Kinds come before any parenthesised note: "`selector-id-mismatch` (opt-in via `--flag`)".
    const head = rest.split(" (")[0]!;
    const kinds = [...head.matchAll(/`([a-z0-9-]+)`/g)].map((k) => k[1]!);
    out.push({ code: m[1]!, kinds, warning: /\(warning\)/.test(rest) });
  }
  return out;
}

/** errors.md's "Auto-patch Coverage" table: code → yes/no. */
function specAutoPatch(text: string): Map<string, boolean> {
  const out = new Map<string, boolean>();
  for (const line of text.split("\n")) {
    const m = /^\|\s*`([EW]\d{4})`\s*\|\s*(yes|no)\s*\|/.exec(line);
    if (m) out.set(m[1]!, m[2] === "yes");
  }
  return out;
}

describe("the code registry", () => {
  it("holds each code once and gives each kind to one code", () => {
    const codes = CODES.map((c) => c.code);
    expect(new Set(codes).size).toBe(codes.length);
    const owner = new Map<string, string>();
    for (const c of CODES) {
      expect(c.kinds.length).toBeGreaterThan(0);
      for (const k of c.kinds) {
        expect(owner.get(k), `kind ${k} is used by ${owner.get(k)} and ${c.code}`).toBeUndefined();
        owner.set(k, c.code);
      }
    }
  });

  it("puts every code in the band its prefix names, with a meaning", () => {
    for (const c of CODES) {
      expect(c.code.startsWith(BANDS[c.band].prefix)).toBe(true);
      expect(c.meaning.length).toBeGreaterThan(10);
      expect(c.meaning.includes("\n")).toBe(false);
      if (c.autoPatch) expect(c.strategy).toBeDefined();
      expect(c.severity).toBe(c.code.startsWith("W") ? "warning" : "error");
    }
  });

  it("leaves structure, opt-in checks and runtime hazards to no narrowing flag", () => {
    expect(narrowingOf("E0003")).toBeNull();
    expect(narrowingOf("E0701")).toBeNull();
    expect(narrowingOf("E0802")).toBeNull();
    expect(narrowingOf("E0103")).toBe("refs");
    expect(narrowingOf("E0201")).toBe("types");
    expect(narrowingOf("E0301")).toBe("effects");
  });

  it.skipIf(!hasSpec)(
    "agrees with errors.md: every code, its kinds, severity and auto-patch coverage",
    () => {
      const text = readFileSync(specPath, "utf8");
      const spec = specCodes(text);
      expect(spec.length).toBeGreaterThan(40);
      for (const s of spec) {
        const info = codeInfo(s.code);
        expect(info, `${s.code} is in errors.md but not in the registry`).toBeDefined();
        expect(info?.kinds, `${s.code} kinds`).toEqual(s.kinds);
        expect(info?.severity, `${s.code} severity`).toBe(s.warning ? "warning" : "error");
        expect(info?.origin).toBe("spec");
      }
      const specSet = new Set(spec.map((s) => s.code));
      for (const c of CODES) {
        if (c.origin === "spec") expect(specSet.has(c.code), `${c.code} is not in errors.md`).toBe(true);
        else expect(specSet.has(c.code), `${c.code} is in errors.md now: mark it origin spec`).toBe(false);
      }
      const table = specAutoPatch(text);
      expect(table.size).toBeGreaterThan(10);
      for (const c of CODES) {
        // "Others: no" — a code absent from the table has no auto-patch.
        // Ours beyond the table (marked, and shown as such in docs/errors.md): E0108's did-you-mean.
        if (c.autoPatchBeyondSpec === true)
          expect(table.get(c.code) ?? false, `${c.code} is in the table now`).toBe(false);
        else expect(c.autoPatch, `${c.code} auto-patch`).toBe(table.get(c.code) ?? false);
      }
    },
  );

  it("renders docs/errors.md exactly as committed", () => {
    const path = join(repoRoot, "docs", "errors.md");
    const doc = renderErrorsDoc();
    if (process.env.KUMIKI_WRITE_DOCS === "1") writeFileSync(path, doc);
    expect(readFileSync(path, "utf8")).toBe(doc);
  });
});
