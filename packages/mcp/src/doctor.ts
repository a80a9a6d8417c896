/**
 * `kumiki mcp serve --doctor`: proves this installed copy works by doing the real thing — a
 * temporary workspace, the server over it, an MCP client talking to it through the protocol, and
 * an add, a view and a check. A server that starts but answers wrongly is still broken; only
 * running it shows otherwise.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { initWorkspace, openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js";
import { LIMITS_URI } from "./limits.js";
import { createMcpServer, type KumikiMcpServer } from "./server.js";
import { TOOLS } from "./tools/index.js";
import { MCP_VERSION, type Versions, versions } from "./version.js";

/** One step of the doctor. */
export interface DoctorCheck {
  readonly name: string;
  readonly ok: boolean;
  /** What was seen. */
  readonly detail: string;
}

/** What the doctor found: `ok` only when every step passed. */
export interface DoctorReport {
  readonly ok: boolean;
  readonly versions?: Versions;
  readonly checks: readonly DoctorCheck[];
}

class StepFailed extends Error {}

/** The structured result of a call, or a failed step saying what came back instead. */
function structured(r: unknown, what: string): Record<string, unknown> {
  const res = r as { isError?: boolean; structuredContent?: Record<string, unknown>; content?: unknown[] };
  if (res.isError === true || res.structuredContent === undefined)
    throw new StepFailed(`${what} failed: ${JSON.stringify(res.structuredContent ?? res.content)}`);
  // kumiki_view leads with the Kumiki text; the JSON follows it.
  const lead = what === "kumiki_view" ? (res.content?.[0] as { text?: string } | undefined)?.text : undefined;
  const text = (res.content?.[lead === undefined ? 0 : 1] as { text?: string } | undefined)?.text;
  if (text !== JSON.stringify(res.structuredContent))
    throw new StepFailed(`${what}: the text item is not the JSON of structuredContent`);
  return lead === undefined ? res.structuredContent : { ...res.structuredContent, text: lead };
}

/**
 * Runs the doctor. With `storeDir`, also checks that the workspace there opens (and closes it).
 */
export async function runDoctor(options: { storeDir?: string } = {}): Promise<DoctorReport> {
  const checks: DoctorCheck[] = [];
  let report: Versions | undefined;
  const step = async (name: string, run: () => Promise<string> | string): Promise<void> => {
    try {
      checks.push({ name, ok: true, detail: await run() });
    } catch (e) {
      checks.push({ name, ok: false, detail: e instanceof Error ? e.message : String(e) });
      throw new StepFailed(name);
    }
  };
  let dir: string | undefined;
  let mcp: KumikiMcpServer | undefined;
  let client: Client | undefined;
  const serverLog: string[] = [];
  try {
    await step("versions", () => {
      report = versions();
      return `server ${report.server}, core ${report.core}, ${report.spec}, MCP ${report.protocol}`;
    });
    await step("temporary workspace", async () => {
      dir = await mkdtemp(path.join(tmpdir(), "kumiki-mcp-doctor-"));
      const ws = await initWorkspace(dir);
      if (!ws.ok) throw new Error(ws.error.message);
      await ws.value.log.close();
      return "created";
    });
    await step("server", async () => {
      const created = await createMcpServer({
        storeDir: dir!,
        author: "agent:doctor",
        log: (l) => serverLog.push(l),
      });
      if (!created.ok) throw new Error(created.error.message);
      mcp = created.value;
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      client = new Client({ name: "kumiki-mcp-doctor", version: MCP_VERSION });
      await Promise.all([mcp.connect(serverSide), client.connect(clientSide)]);
      const listed = (await client.listTools()).tools.map((t) => t.name);
      const missing = TOOLS.map((t) => t.name).filter((n) => !listed.includes(n));
      if (missing.length > 0) throw new Error(`tools/list lacks ${missing.join(", ")}`);
      const limits = await client.readResource({ uri: LIMITS_URI });
      if (limits.contents.length !== 1) throw new Error(`${LIMITS_URI} did not read`);
      return `${listed.length} tools listed, ${LIMITS_URI} read`;
    });
    let def = "";
    await step("add", async () => {
      const r = structured(
        await client!.callTool({
          name: "kumiki_add",
          arguments: { layer: "slot", name: "doctorCount", body: ": Int = 41" },
        }),
        "kumiki_add",
      );
      const opIds = r.opIds as string[];
      def = String(r.def);
      if (opIds.length !== 1) throw new Error(`expected one op-id, got ${JSON.stringify(opIds)}`);
      return `slot.doctorCount added as ${opIds[0]}`;
    });
    await step("view", async () => {
      const r = structured(
        await client!.callTool({ name: "kumiki_view", arguments: { selector: "slot.doctorCount" } }),
        "kumiki_view",
      );
      const text = String(r.text);
      if (!/slot\s+doctorCount\s*:\s*Int\s*=\s*41/.test(text))
        throw new Error(`kumiki_view returned ${JSON.stringify(text)}`);
      return `read back ${JSON.stringify(text.trim())}`;
    });
    await step("check", async () => {
      const r = structured(await client!.callTool({ name: "kumiki_check", arguments: {} }), "kumiki_check");
      const diagnostics = r.diagnostics as { definition?: string; severity: string; code: string }[];
      const own = diagnostics.filter((d) => d.definition === def && d.severity === "error");
      if (own.length > 0) throw new Error(`unexpected errors: ${own.map((d) => d.code).join(", ")}`);
      return `checked: ${String(r.errors)} error(s) in the program, none in slot.doctorCount`;
    });
    if (options.storeDir !== undefined) {
      await step("store", async () => {
        const ws = await openWorkspaceStore(options.storeDir!, { walkUp: true });
        if (!ws.ok) throw new Error(ws.error.message);
        await ws.value.close();
        return `${ws.value.workspace.paths.root} opens`;
      });
    }
  } catch (e) {
    if (!(e instanceof StepFailed)) throw e;
  } finally {
    await client?.close().catch(() => undefined);
    await mcp?.close().catch(() => undefined);
    if (dir !== undefined) await rm(dir, { recursive: true, force: true }).catch(() => undefined);
  }
  const failed = checks.find((c) => !c.ok);
  if (failed !== undefined && serverLog.length > 0)
    checks.push({ name: "server log", ok: false, detail: serverLog.join("\n") });
  return {
    ok: failed === undefined,
    ...(report === undefined ? {} : { versions: report }),
    checks,
  };
}
