import { parseLimitAssignments, runDoctor, serveStdio, versions } from "@kumiki-graph/mcp";
import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { failure, usageError } from "../errors.js";

/**
 * `kumiki mcp serve`: the MCP server of ai-edit.md §9.7 over stdio (docs/mcp.md). While it serves,
 * standard output carries MCP only; `--doctor` and `--version` print and exit instead.
 */
export const mcpServe: Command = {
  name: "mcp serve",
  summary: "serve the store to AI agents over MCP on stdio (the tools of ai-edit.md §9.7)",
  usage: ["mcp serve [--store DIR] [--limit NAME=N]...", "mcp serve --doctor", "mcp serve --version"],
  examples: [
    "kumiki mcp serve --store ./todo-app",
    "kumiki mcp serve --doctor   # exits 0 only after a real add, view and check through MCP",
    'claude mcp add kumiki -- kumiki mcp serve --store "$PWD"',
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
      description: "set a limit of kumiki://limits (bodyBytes, responseBytes, wildcardResults)",
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
    const limit = ctx.options.limit;
    const limits = parseLimitAssignments(
      Array.isArray(limit) ? limit : typeof limit === "string" ? [limit] : [],
    );
    if (!limits.ok) throw usageError(`kumiki mcp serve: ${limits.message}`);
    // The ops are an agent's unless an author was given: user:$USER would misname them.
    const given = stringOption(ctx.options, "author") ?? (ctx.io.env.KUMIKI_AUTHOR || undefined);
    const stopped = await serveStdio({
      storeDir: ctx.storeDir ?? ctx.io.cwd,
      limits: limits.value,
      ...(given === undefined ? {} : { author: ctx.author }),
    });
    if (stopped !== undefined) throw failure(stopped.code, stopped.message);
    return { json: { served: true }, text: "" };
  },
};
