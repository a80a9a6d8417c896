import path from "node:path";
import { CAPS_FILE, type CapabilityManifest, readCapabilityManifest } from "@kumiki-graph/core";
import { LOOPBACK_HOSTS, mcpGraphRoutes, parseLimitAssignments } from "@kumiki-graph/mcp";
import { jsonServerLogger, liveViewRoutes, redactedUrl, startSyncService } from "@kumiki-graph/sync-server";
import { listOption, stringOption } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { failure, fromRejection, usageError } from "../errors.js";
import { untilStopped } from "../stop-signal.js";

/**
 * `kumiki serve`: runs the sync server (docs/sync.md) until SIGINT or SIGTERM, then flushes every
 * graph to disk and exits 0. The first line on stdout says where it listens (JSON with --json);
 * connection and refusal lines go to stderr. SIGHUP reads the token file again; a token taken out
 * of it is withdrawn from its connections. On PostgreSQL the tokens are the database's, shared live
 * by every server of the service: `--token-file` stores its tokens there (SIGHUP: again). Every
 * option is also read from `KUMIKI_SERVE_<OPTION>` (docs/sync.md), the command line winning.
 */
/** `kumiki serve`'s options (flags or KUMIKI_SERVE_* variables), checked; a bad one is a usage error. */
function serveOptions(ctx: CommandContext) {
  const portText = stringOption(ctx.options, "port") ?? "7420";
  const port = Number(portText);
  if (!/^\d+$/.test(portText) || port > 65535)
    throw usageError(
      `kumiki serve: ${ctx.optionName("port")} must be a number from 0 to 65535, got ${JSON.stringify(portText)}`,
    );
  const storageUrl = stringOption(ctx.options, "storage");
  if (storageUrl !== undefined && stringOption(ctx.options, "data") !== undefined)
    throw usageError(
      `kumiki serve: give ${ctx.optionName("data")} or ${ctx.optionName("storage")} (postgres://…), not both`,
    );
  if (storageUrl !== undefined && !/^postgres(ql)?:\/\//.test(storageUrl))
    throw usageError(
      `kumiki serve: ${ctx.optionName("storage")} takes a PostgreSQL URL (postgres://user@host:5432/db), got ${JSON.stringify(redactedUrl(storageUrl))}`,
    );
  const mib = (name: string): number | undefined => {
    const text = stringOption(ctx.options, name);
    if (text === undefined) return undefined;
    const n = Number(text);
    if (!/^\d+(\.\d+)?$/.test(text) || n <= 0 || n > 4096)
      throw usageError(
        `kumiki serve: ${ctx.optionName(name)} takes MiB from 0.001 to 4096 (64, 0.5), got ${JSON.stringify(text)}`,
      );
    return Math.round(n * 1024 * 1024);
  };
  const maxMessageBytes = mib("max-message");
  const maxChangeBytes = mib("max-change");
  const maxBufferedBytes = mib("max-unread");
  const capsDir = stringOption(ctx.options, "caps");
  let capabilities: CapabilityManifest | undefined;
  if (capsDir !== undefined) {
    const dir = path.resolve(ctx.io.cwd, capsDir);
    const read = readCapabilityManifest(dir);
    if (!read.ok) throw failure(read.error.code, read.error.message);
    if (read.value === undefined)
      throw usageError(`kumiki serve: ${ctx.optionName("caps")} ${capsDir}: no ${CAPS_FILE} in ${dir}`);
    capabilities = read.value;
  }
  const logFormat = stringOption(ctx.options, "log-format") ?? "text";
  if (logFormat !== "text" && logFormat !== "json")
    throw usageError(
      `kumiki serve: ${ctx.optionName("log-format")} takes text or json, got ${JSON.stringify(logFormat.slice(0, 40))}`,
    );
  const logger = logFormat === "json" ? jsonServerLogger() : undefined;
  const mcpLimits = parseLimitAssignments(listOption(ctx.options, "mcp-limit"), ctx.optionName("mcp-limit"));
  if (!mcpLimits.ok) throw usageError(`kumiki serve: ${mcpLimits.message}`);
  const dataDir = path.resolve(ctx.io.cwd, stringOption(ctx.options, "data") ?? "kumiki-server");
  const tokenFile = stringOption(ctx.options, "token-file");
  const host = stringOption(ctx.options, "host") ?? "127.0.0.1";
  return {
    port,
    host,
    storageUrl,
    dataDir,
    tokenFile,
    capabilities,
    logger,
    mcpLimits: mcpLimits.value,
    ...(maxMessageBytes === undefined ? {} : { maxMessageBytes }),
    ...(maxChangeBytes === undefined ? {} : { maxChangeBytes }),
    ...(maxBufferedBytes === undefined ? {} : { maxBufferedBytes }),
  };
}

export const serve: Command = {
  name: "serve",
  summary: "run the sync server agents push to and pull from (127.0.0.1 by default)",
  usage: [
    "serve [--port N] [--host ADDR] [--data DIR | --storage postgres://…] [--token-file F] [--mcp-origin URL]... [--mcp-limit NAME=N]... [--max-message MiB] [--max-change MiB] [--max-unread MiB] [--caps DIR] [--log-format text|json]",
  ],
  examples: [
    "kumiki serve --port 7420 --data ./graphs --token-file tokens.json",
    "kumiki serve --port 0   # any free port; the first line says which",
    "kumiki serve --storage postgres://postgres@127.0.0.1:5432/kumiki --token-file tokens.json",
  ],
  options: {
    port: { type: "string", value: "N", description: "TCP port (default 7420; 0 picks a free one)" },
    host: {
      type: "string",
      value: "ADDR",
      description: "interface to bind (default 127.0.0.1: this machine only)",
    },
    data: {
      type: "string",
      value: "DIR",
      description: "where the server stores graphs (default ./kumiki-server)",
    },
    storage: {
      type: "string",
      value: "URL",
      description:
        "store graphs in PostgreSQL instead (postgres://user@host:5432/db; table kumiki_chunks, made if absent)",
    },
    "token-file": {
      type: "string",
      value: "F",
      description:
        "tokens and their access per graph (JSON, docs/sync.md; SIGHUP reads it again); with --storage, stored in the database for every server; without it anyone may write, or on PostgreSQL the tokens stored there",
    },
    "max-message": {
      type: "string",
      value: "MiB",
      description:
        "the largest WebSocket message read from a peer (default 64); a first push carries every op the server lacks in one message",
    },
    "max-change": {
      type: "string",
      value: "MiB",
      description: "the largest write (one bundle of ops) a pushed change may hold (default 16)",
    },
    "max-unread": {
      type: "string",
      value: "MiB",
      description:
        "back-pressure: a peer leaving more than this much of what it was sent unread is dropped as a slow reader, and syncs on when it reconnects (default 64)",
    },
    caps: {
      type: "string",
      value: "DIR",
      description:
        "a folder holding kumiki.caps.json: the custom capabilities every graph is checked with (as a workspace with that file beside it)",
    },
    "mcp-origin": {
      type: "string",
      multiple: true,
      value: "URL",
      description:
        "a browser origin allowed to call the MCP endpoints /g/<graph>/mcp (others are refused, 403)",
    },
    "log-format": {
      type: "string",
      value: "text|json",
      description:
        "how events go to stderr: text lines (default), or JSON lines with level, time and the event's fields (connection ids, codes) for a log collector",
    },
    "mcp-limit": {
      type: "string",
      multiple: true,
      value: "NAME=N",
      description:
        "set a limit of the MCP endpoints, as in kumiki://limits (bodyBytes, responseBytes, wildcardResults, httpSessions, idleSeconds)",
    },
  },
  positionals: { min: 0, max: 0, names: "none" },
  // A service is configured by its environment where flags are awkward (a container, a unit file).
  environment: "KUMIKI_SERVE_",
  async run(ctx) {
    const { port, host, storageUrl, dataDir, tokenFile, capabilities, logger, mcpLimits, ...sizes } =
      serveOptions(ctx);
    /** An event of serve's own: a JSON line with --log-format json, else `kumiki serve: <text>`. */
    const note = (level: "info" | "warn", fields: Record<string, unknown>, text: string) => {
      if (logger !== undefined) logger[level](fields, text);
      else ctx.io.stderr(`kumiki serve: ${text}\n`);
    };
    // MCP over Streamable HTTP for each graph, at /g/<graph>/mcp, on the server's own copy.
    const loopback = ["127.0.0.1", "::1", "localhost"].includes(host);
    const routes = mcpGraphRoutes({
      log: (line) => note("info", { component: "mcp" }, `mcp: ${line}`),
      limits: mcpLimits,
      allowedOrigins: listOption(ctx.options, "mcp-origin"),
      ...(capabilities === undefined ? {} : { capabilities }),
      ...(loopback ? { allowedHosts: LOOPBACK_HOSTS } : {}),
    });
    if (!routes.ok) throw failure(routes.error.code, routes.error.message);
    const mcp = routes.value;
    // The live view of each graph at /g/<graph>/ (docs/ui.md), under the same tokens.
    const views = liveViewRoutes({
      ...(capabilities === undefined ? {} : { check: { capabilities } }),
      ...(loopback ? { allowedHosts: LOOPBACK_HOSTS } : {}),
    });
    const started = await startSyncService({
      routes: (req, res, s) => views.route(req, res, s) || mcp.route(req, res, s),
      ...sizes,
      ...(capabilities === undefined ? {} : { capabilities }),
      port,
      host,
      ...(storageUrl === undefined ? { dataDir } : { storageUrl }),
      ...(tokenFile === undefined ? {} : { tokenFile: path.resolve(ctx.io.cwd, tokenFile) }),
      log: (line) => ctx.io.stderr(`kumiki serve: ${line}\n`),
      ...(logger === undefined ? {} : { logger }),
    });
    if (!started.ok) {
      views.close();
      await mcp.close();
      throw fromRejection(started.error);
    }
    const service = started.value;
    const { where } = service;
    const unwatchTokens = service.tokens?.onChange?.(() => void mcp.review());
    const server = service.server;
    // Listened for before the first line says where it listens: a SIGTERM sent on reading that
    // line (a supervisor's, a test's) drains and flushes instead of killing the process.
    const stopped = untilStopped();
    const info = {
      url: server.url,
      port: server.port,
      host: server.host,
      ...(storageUrl === undefined ? { data: dataDir } : { storage: where }),
      auth: server.health().auth,
    };
    // A long-running verb: where it listens must be known before it returns.
    ctx.io.stdout(
      ctx.json
        ? `${JSON.stringify({ listening: info })}\n`
        : `listening on ${server.url} (${storageUrl === undefined ? "data" : "storage"} ${where}); MCP at ${server.url.replace(/^ws/, "http")}/g/<graph>/mcp\n`,
    );
    if (info.auth === "none")
      note(
        "warn",
        { event: "open-access" },
        storageUrl === undefined
          ? "warning: no --token-file: any client that reaches this port may read and write every graph"
          : "warning: no --token-file and no tokens stored in the database: any client that reaches this port may read and write every graph, until tokens are stored (kumiki serve --storage … --token-file F, on any server of the database); from then on every connection needs one",
      );
    // SIGHUP: the token file read again (on PostgreSQL, stored for every server).
    const reread = () => {
      void service.reloadTokens().then((r) => {
        if (!r.ok) {
          const text =
            r.error.code === "no-token-file"
              ? "no --token-file to read again"
              : `tokens unchanged: ${r.error.message}`;
          note("warn", { event: "sighup" }, `SIGHUP: ${text}`);
          return;
        }
        const n = r.value.tokens;
        const text = `${n} token${n === 1 ? "" : "s"} from ${path.resolve(ctx.io.cwd, tokenFile!)} ${r.value.stored ? "stored" : "in use"}`;
        note("info", { event: "sighup", tokens: n }, `SIGHUP: ${text}`);
      });
    };
    process.on("SIGHUP", reread);
    const signal = await stopped;
    process.off("SIGHUP", reread);
    const health = server.health();
    unwatchTokens?.();
    // The live views' event streams end first (a page reconnects elsewhere); what is in flight is
    // answered (an MCP write included), then the MCP sessions end.
    views.close();
    await server.drain();
    await mcp.close();
    await service.close();
    return {
      json: { stopped: signal, ...info, refused: health.refused },
      text: `stopped on ${signal}: every graph flushed to ${where}`,
    };
  },
};
