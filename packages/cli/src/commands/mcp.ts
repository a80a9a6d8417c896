import { parseLimitAssignments, runDoctor, serveHttp, serveStdio, versions } from "@kumiki-graph/mcp";
import { listOption, stringOption } from "../args.js";
import type { Command } from "../command.js";
import { failure, usageError } from "../errors.js";
import { untilStopped } from "../stop-signal.js";

/**
 * `kumiki mcp serve`: the MCP server of ai-edit.md §9.7 over stdio (docs/mcp.md). While it serves,
 * standard output carries MCP only; `--doctor` and `--version` print and exit instead. With
 * `--http [HOST:]PORT` it serves the workspace over Streamable HTTP at /mcp instead, one session
 * per client, until SIGINT or SIGTERM; the first line on stdout says where.
 */
export const mcpServe: Command = {
  name: "mcp serve",
  summary: "serve the store to AI agents over MCP on stdio, or over HTTP (the tools of ai-edit.md §9.7)",
  usage: [
    "mcp serve [--store DIR] [--limit NAME=N]...",
    "mcp serve --http [HOST:]PORT [--store DIR] [--origin URL]... [--limit NAME=N]...",
    "mcp serve --doctor",
    "mcp serve --version",
  ],
  examples: [
    "kumiki mcp serve --store ./todo-app",
    "kumiki mcp serve --doctor   # exits 0 only after a real add, view and check through MCP",
    'claude mcp add kumiki -- kumiki mcp serve --store "$PWD"',
    "kumiki mcp serve --http 7421 --store ./todo-app   # http://127.0.0.1:7421/mcp",
  ],
  options: {
    doctor: {
      type: "boolean",
      description: "check this installation with a real round trip on a temporary store, then exit",
    },
    version: {
      type: "boolean",
      description: "print the server, core, spec and MCP protocol versions, then exit",
    },
    limit: {
      type: "string",
      multiple: true,
      value: "NAME=N",
      description:
        "set a limit of kumiki://limits (bodyBytes, responseBytes, wildcardResults, httpSessions, idleSeconds)",
    },
    http: {
      type: "string",
      value: "[HOST:]PORT",
      description:
        "serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST 127.0.0.1 unless given; PORT 0 picks a free one)",
    },
    origin: {
      type: "string",
      multiple: true,
      value: "URL",
      description: "with --http: a browser origin allowed to call (others are refused, 403)",
    },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    if (ctx.options.version === true) {
      const v = versions();
      return {
        json: v,
        text: `@kumiki-graph/mcp ${v.server}\n@kumiki-graph/core ${v.core}\nspec ${v.spec}\nMCP protocol ${v.protocol}`,
      };
    }
    if (ctx.options.doctor === true) {
      const report = await runDoctor(ctx.storeDir === undefined ? {} : { storeDir: ctx.storeDir });
      const lines = report.checks.map((c) => `${c.ok ? "ok  " : "FAIL"} ${c.name}: ${c.detail}`);
      lines.push(report.ok ? "doctor: all checks passed" : "doctor: a check failed");
      return { json: report, text: lines.join("\n"), exit: report.ok ? 0 : 1 };
    }
    const limits = parseLimitAssignments(listOption(ctx.options, "limit"));
    // serveStdio and serveHttp let a failed background save go themselves: the process is theirs.
    if (!limits.ok) throw usageError(`kumiki mcp serve: ${limits.message}`);
    // The ops are an agent's unless an author was given: user:$USER would misname them.
    const given = stringOption(ctx.options, "author") ?? (ctx.io.env.KUMIKI_AUTHOR || undefined);
    const http = stringOption(ctx.options, "http");
    if (http !== undefined) {
      const m = /^(?:(.+):)?(\d{1,5})$/.exec(http);
      if (m === null || Number(m[2]) > 65535)
        throw usageError(
          `kumiki mcp serve: --http takes [HOST:]PORT (7421, 127.0.0.1:7421), got ${JSON.stringify(http)}`,
        );
      const started = await serveHttp({
        storeDir: ctx.storeDir ?? ctx.io.cwd,
        limits: limits.value,
        host: (m[1] ?? "127.0.0.1").replace(/^\[(.*)\]$/, "$1"),
        port: Number(m[2]),
        allowedOrigins: listOption(ctx.options, "origin"),
        ...(given === undefined ? {} : { author: ctx.author }),
      });
      if (!started.ok) throw failure(started.error.code, started.error.message);
      const server = started.value;
      // Listened for before the first line says where it listens: a SIGTERM sent on reading that
      // line (a supervisor's, a test's) stops it cleanly instead of killing it.
      const stopped = untilStopped();
      ctx.io.stdout(
        ctx.json
          ? `${JSON.stringify({ listening: { url: server.url, port: server.port } })}\n`
          : `serving MCP on ${server.url}\n`,
      );
      const signal = await stopped;
      await server.close();
      return { json: { stopped: signal, url: server.url }, text: `stopped on ${signal}` };
    }
    const stopped = await serveStdio({
      storeDir: ctx.storeDir ?? ctx.io.cwd,
      limits: limits.value,
      ...(given === undefined ? {} : { author: ctx.author }),
    });
    if (stopped !== undefined) throw failure(stopped.code, stopped.message);
    return { json: { served: true }, text: "" };
  },
};
