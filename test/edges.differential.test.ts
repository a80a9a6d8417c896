/**
 * The CLI and the MCP server are two edges over one core: the same scenario — writes, a capability
 * manifest, `body:N` patches, bad input, a check — run through `kumiki` (real bin) in one workspace
 * and through `kumiki mcp serve` (a real SDK client over stdio) in another gives the same program
 * and the same diagnostics, and refuses the same bad input with the same code.
 */
import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { dispose, kumikiBin, serve, tempDir } from "../packages/mcp/test/support/session.js";

const exec = promisify(execFile);
const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await dispose(d);
});

interface Outcome {
  readonly ok: boolean;
  readonly code?: string;
}

async function cli(dir: string, ...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const author = args[0]?.startsWith("--as=") ? args.shift()!.slice(5) : "agent:edge";
  try {
    const r = await exec(process.execPath, [kumikiBin, "--store", dir, ...args], {
      env: { ...process.env, KUMIKI_AUTHOR: author },
    });
    return { code: 0, out: r.stdout, err: r.stderr };
  } catch (e) {
    const x = e as { code: number; stdout: string; stderr: string };
    return { code: x.code, out: x.stdout, err: x.stderr };
  }
}

/** One step of the scenario, in each edge's own terms. */
interface Step {
  readonly cli: string[];
  readonly mcp: [string, Record<string, unknown>];
}

const MANIFEST = JSON.stringify({ capabilities: [{ name: "telemetry.track" }] });
const APP = '\n    caps   = [telemetry.track]\n    routes = {"/" -> Sum, "/404" -> Sum}\n    init   = []';
const SCENARIO: Step[] = [
  {
    cli: ["add", "slot", "count", "Int = 0"],
    mcp: ["kumiki_add", { layer: "slot", name: "count", body: "Int = 0" }],
  },
  {
    cli: ["add", "slot", "total", "Int = 0"],
    mcp: ["kumiki_add", { layer: "slot", name: "total", body: "Int = 0" }],
  },
  {
    cli: ["add", "tile", "Sum", "column(\n    text(total.show),\n    text(total.show))"],
    mcp: [
      "kumiki_add",
      { layer: "tile", name: "Sum", body: "column(\n    text(total.show),\n    text(total.show))" },
    ],
  },
  // The body:N form: line 3 only, though line 2 holds the same text.
  {
    cli: ["edit", "tile.Sum", JSON.stringify({ "body:3": "replace 'total' -> 'count'" })],
    mcp: ["kumiki_edit", { qname: "tile.Sum", patch: { "body:3": "replace 'total' -> 'count'" } }],
  },
  // Bad input, refused alike: a name taken, a reference to nothing, an anchor that is not there.
  {
    cli: ["add", "slot", "count", "Int = 1"],
    mcp: ["kumiki_add", { layer: "slot", name: "count", body: "Int = 1" }],
  },
  {
    cli: ["add", "tile", "Bad", "text(nothing.show)"],
    mcp: ["kumiki_add", { layer: "tile", name: "Bad", body: "text(nothing.show)" }],
  },
  {
    cli: ["edit", "tile.Sum", JSON.stringify({ "body:2": "replace 'zzz' -> 'y'" })],
    mcp: ["kumiki_edit", { qname: "tile.Sum", patch: { "body:2": "replace 'zzz' -> 'y'" } }],
  },
  // An app that declares the manifest's custom capability: accepted by both gates.
  {
    cli: ["add", "app", "Main", APP],
    mcp: ["kumiki_add", { layer: "app", name: "Main", body: APP }],
  },
  { cli: ["rename", "slot.total", "sum"], mcp: ["kumiki_rename", { qname: "slot.total", new_name: "sum" }] },
];

describe("one scenario through the CLI and through MCP", () => {
  it("gives the same program, the same refusals and the same diagnostics", { timeout: 120_000 }, async () => {
    const viaCli = await tempDir("diff-cli");
    const viaMcp = await tempDir("diff-mcp");
    dirs.push(viaCli, viaMcp);
    for (const d of [viaCli, viaMcp]) {
      expect((await cli(d, "init")).code).toBe(0);
      writeFileSync(path.join(d, "kumiki.caps.json"), MANIFEST);
    }
    const fromCli: Outcome[] = [];
    for (const step of SCENARIO) {
      const r = await cli(viaCli, ...step.cli, "--json");
      const json = JSON.parse(r.out) as { error?: { code: string } };
      fromCli.push(r.code === 0 ? { ok: true } : { ok: false, code: json.error?.code ?? "?" });
    }
    const s = await serve(viaMcp);
    const fromMcp: Outcome[] = [];
    let checked: Record<string, unknown>;
    try {
      for (const step of SCENARIO) {
        const r = await s.call(step.mcp[0], step.mcp[1]);
        const e = r.value.error as { code?: string } | undefined;
        fromMcp.push(r.isError ? { ok: false, code: e?.code ?? "?" } : { ok: true });
      }
      checked = (await s.call("kumiki_check", {})).value;
    } finally {
      await s.close();
    }
    expect(fromMcp).toEqual(fromCli);
    expect(fromCli.map((o) => o.code ?? "ok")).toEqual([
      "ok",
      "ok",
      "ok",
      "ok",
      "duplicate-name",
      "undefined-reference",
      "anchor-not-found",
      "ok",
      "ok",
    ]);
    const exported = await cli(viaCli, "export");
    expect((await cli(viaMcp, "export")).out).toBe(exported.out);
    expect(exported.out).toContain("text(sum.show),\n    text(count.show)");
    const cliCheck = JSON.parse((await cli(viaCli, "check", "--json")).out) as Record<string, unknown>;
    const codes = (r: Record<string, unknown>) =>
      (r.diagnostics as { code: string; location: string }[]).map((d) => `${d.code}@${d.location}`);
    expect(codes(checked)).toEqual(codes(cliCheck));
    expect({ ok: checked.ok, errors: checked.errors }).toEqual({ ok: cliCheck.ok, errors: cliCheck.errors });
  });
});

describe("patterns and §9.7's fix form, through the CLI and through MCP", () => {
  it("view of *, refs of a pattern, and fix with apply give the same answers on both edges", {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir("diff-patterns");
    dirs.push(dir);
    expect((await cli(dir, "init")).code).toBe(0);
    const program = [
      "slot count : Int = 0",
      "slot total : Int = 0",
      'tile Btn = button("go")',
      "reducer inc on=ui.click(Btn) do= count := cuont + 1",
      "reducer add on=ui.click(Btn) do= total := totl + count",
    ].join("\n");
    writeFileSync(path.join(dir, "p.kumiki"), `${program}\n`);
    expect((await cli(dir, "import", path.join(dir, "p.kumiki"))).code).toBe(0);
    const s = await serve(dir);
    try {
      // Every definition: `*` is the pattern kumiki://limits lists (was: refused as no selector).
      const all = await cli(dir, "view", "*", "--json");
      expect(all.code, all.err).toBe(0);
      const viaMcp = await s.call("kumiki_view", { selector: "*" });
      expect(viaMcp.isError).toBe(false);
      const cliAll = JSON.parse(all.out) as { definitions: { qname: string; def: string; text: string }[] };
      expect(viaMcp.value.text).toBe(cliAll.definitions.map((d) => d.text).join(""));
      // MCP sends the text once and indexes it: each definition with the line it starts at.
      let line = 1;
      expect(viaMcp.value.definitions).toEqual(
        cliAll.definitions.map((d) => {
          const at = line;
          line += d.text.split("\n").length - 1;
          return { qname: d.qname, def: d.def, line: at };
        }),
      );
      expect(cliAll.definitions.map((d) => d.qname).sort()).toEqual([
        "reducer.add",
        "reducer.inc",
        "slot.count",
        "slot.total",
        "tile.Btn",
      ]);
      // The referrers of every slot (was: not-found over MCP, a usage error on the CLI).
      const refs = await cli(dir, "refs", "slot.*", "--json");
      expect(refs.code, refs.err).toBe(0);
      const mcpRefs = await s.call("kumiki_refs", { qname: "slot.*" });
      expect(mcpRefs.isError).toBe(false);
      const cliRefs = JSON.parse(refs.out) as Record<string, unknown>;
      expect(mcpRefs.value).toEqual(cliRefs);
      expect(cliRefs.matched).toEqual(["slot.count", "slot.total"]);
      expect(
        (cliRefs.referrers as { qname: string; refersTo: string[] }[]).map((r) => [r.qname, r.refersTo]),
      ).toEqual([
        ["reducer.add", ["slot.count", "slot.total"]],
        ["reducer.inc", ["slot.count"]],
      ]);
      // §9.7's kumiki_fix {error_code, apply: true} applies, as `kumiki fix --apply` would.
      const fixed = await s.call("kumiki_fix", { error_code: "E0103", apply: true });
      expect(fixed.isError, JSON.stringify(fixed.value)).toBe(false);
      expect((fixed.value.applied as unknown[]).length).toBe(2);
      const after = await cli(dir, "export");
      expect(after.out).toContain("count := count + 1");
      expect(after.out).toContain("total := total + count");
    } finally {
      await s.close();
    }
  });
});

describe("a retry's steps, named by each edge in its own terms", () => {
  it("a locked write and a name conflict: the same steps as data, CLI commands on the CLI, tools over MCP", {
    timeout: 120_000,
  }, async () => {
    const dir = await tempDir("diff-remedy");
    dirs.push(dir);
    expect((await cli(dir, "init")).code).toBe(0);
    // A program that defines a name twice (a faithful import keeps both: a name-taken record).
    writeFileSync(path.join(dir, "p.kumiki"), "slot a : Int = 1\n\nslot a : Int = 2\n");
    expect((await cli(dir, "import", path.join(dir, "p.kumiki"))).code).toBe(0);
    expect((await cli(dir, "--as=agent:owner", "lock", "agent:owner", "slot.*")).code).toBe(0);

    const viaCli = await cli(dir, "add", "slot", "b", "Int = 0", "--json");
    expect(viaCli.code).toBe(1);
    const cliError = (
      JSON.parse(viaCli.out) as { error: { code: string; message: string; details: { steps: unknown } } }
    ).error;
    const steps = [{ do: "unlock", agent: "agent:owner", pattern: "slot.*" }];
    expect(cliError.code).toBe("locked");
    expect(cliError.details.steps).toEqual(steps);
    // Core's words name no edge; the CLI adds its command, in what a person reads.
    expect(cliError.message).not.toMatch(/kumiki[ _]unlock/);
    expect(viaCli.err).toContain("(kumiki unlock agent:owner 'slot.*')");
    const cliConflicts = JSON.parse((await cli(dir, "conflicts", "--json")).out) as {
      conflicts: { id: string; retry: string; remedy: { do: string }[] }[];
    };
    const cliText = (await cli(dir, "conflicts")).out;

    const s = await serve(dir);
    let mcpError: { code?: string; message?: string; details?: { steps?: unknown } };
    let mcpConflicts: { conflicts: { id: string; retry: string; remedy: { do: string }[] }[] };
    try {
      const r = await s.call("kumiki_add", { layer: "slot", name: "b", body: "Int = 0" });
      expect(r.isError).toBe(true);
      mcpError = r.value.error as typeof mcpError;
      mcpConflicts = (await s.call("kumiki_conflicts", {})).value as typeof mcpConflicts;
    } finally {
      await s.close();
    }
    expect(mcpError.code).toBe("locked");
    expect(mcpError.details?.steps).toEqual(steps);
    expect(mcpError.message).not.toContain("kumiki unlock agent:owner 'slot.*'");
    expect(mcpError.message).toContain("no MCP tool");

    // The same records and steps; each edge's retry names its own way to take them.
    const named = cliConflicts.conflicts.find((c) => c.id.startsWith("name-taken:"))!;
    expect(named.remedy.map((r) => r.do)).toEqual(["rename", "remove"]);
    expect(mcpConflicts.conflicts.map((c) => [c.id, c.remedy])).toEqual(
      cliConflicts.conflicts.map((c) => [c.id, c.remedy]),
    );
    expect(named.retry).not.toMatch(/kumiki/);
    expect(cliText).toMatch(
      /retry: rename def_\w+ to a free name, or remove it \(kumiki rename def_\w+ <new-name>; kumiki remove def_\w+\)/,
    );
    const overMcp = mcpConflicts.conflicts.find((c) => c.id === named.id)!;
    expect(overMcp.retry).toMatch(
      /\(kumiki_rename \{qname: "def_\w+", new_name\}; kumiki_remove \{qname: "def_\w+"\}\)$/,
    );
  });
});
