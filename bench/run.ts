/**
 * `npm run bench`: runs every benchmark and prints one table. Exits non-zero only when a benchmark
 * crashes — figures are reported, never asserted.
 */
import { cpus, totalmem } from "node:os";
import { benchCheck } from "./check.js";
import { benchCli } from "./cli.js";
import { benchCliScale } from "./cli-scale.js";
import { benchDamage } from "./damage.js";
import { benchEdges } from "./edges.js";
import { benchExport } from "./export.js";
import { type BenchRow, formatTable } from "./harness.js";
import { benchHub } from "./hub.js";
import { benchLang } from "./lang.js";
import { benchLive } from "./live.js";
import { benchMcpContext } from "./mcp-context.js";
import { benchMcpHttp } from "./mcp-http.js";
import { benchMetrics } from "./metrics.js";
import { benchRepair } from "./repair.js";
import { benchScale } from "./scale.js";
import { benchStore } from "./store.js";
import { benchSync } from "./sync.js";
import { benchSyncService } from "./sync-service.js";
import { benchUi } from "./ui.js";
import { benchWritePath } from "./write-path.js";

const suites: [string, () => Promise<BenchRow[]>][] = [
  ["language front-end", benchLang],
  ["check", benchCheck],
  ["scale (180 / 1,000 / 5,000 definitions)", benchScale],
  ["export (500 to 10,000 definitions)", benchExport],
  ["hub (definitions that all reference one type)", benchHub],
  ["store", benchStore],
  ["live workspace", benchLive],
  ["write path of a long-running store, the MCP server and the sync server", benchWritePath],
  ["repair loop", benchRepair],
  ["MCP context (bytes per call)", benchMcpContext],
  ["MCP over HTTP against stdio (calls/s, latency)", benchMcpHttp],
  ["damage and repair (10k ops)", benchDamage],
  ["sync", benchSync],
  ["sync service (servers on FS and PostgreSQL)", benchSyncService],
  ["metrics scrape of the sync server", benchMetrics],
  ["edges in time: onChange latency, reconnect schedule", benchEdges],
  ["cli (real bin)", benchCli],
  ["cli at scale (5,000 definitions; 10,000 ops)", benchCliScale],
  ["live view in Chromium (kumiki ui)", benchUi],
];

// `npm run bench -- write path`: only the suites whose name holds one of the words given.
const wanted = process.argv.slice(2).map((w) => w.toLowerCase());
const chosen = suites.filter(
  ([name]) => wanted.length === 0 || wanted.some((w) => name.toLowerCase().includes(w)),
);
const rows: BenchRow[] = [];
let failed = false;
for (const [name, run] of chosen) {
  try {
    process.stderr.write(`bench: ${name}…\n`);
    rows.push(...(await run()));
  } catch (err) {
    failed = true;
    process.stderr.write(
      `bench: ${name} crashed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
}
const cpu = cpus()[0]?.model ?? "unknown CPU";
process.stdout.write(
  `Kumiki Graph benchmarks — ${new Date().toISOString().slice(0, 10)}, Node ${process.version}, ${cpus().length} × ${cpu}, ${Math.round(totalmem() / 2 ** 30)} GiB\n\n`,
);
process.stdout.write(`${formatTable(rows)}\n`);
if (rows.length === 0) process.stdout.write("(no benchmark ran: is ../shared/kumiki/examples present?)\n");
process.exitCode = failed ? 1 : 0;
