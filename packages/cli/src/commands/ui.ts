import http from "node:http";
import type { AddressInfo } from "node:net";
import { LOOPBACK_NAMES, liveView } from "@kumiki-graph/sync-server";
import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { failure, usageError } from "../errors.js";
import { untilStopped } from "../stop-signal.js";

/**
 * `kumiki ui`: the live view of the workspace's graph in a browser (docs/ui.md) — the program as a
 * map, each definition's page with its history, the agents' activity, conflicts and locks — on
 * 127.0.0.1, following every write as it lands, until SIGINT or SIGTERM. Read-only.
 */
export const ui: Command = {
  name: "ui",
  summary: "watch the graph live in a browser: map, definitions, agents, conflicts (127.0.0.1)",
  usage: ["ui [--port PORT] [--store DIR]"],
  examples: ["kumiki ui              # http://127.0.0.1:7430/", "kumiki ui --port 0     # a free port"],
  options: {
    port: {
      type: "string",
      value: "PORT",
      description: "the port on 127.0.0.1 (default 7430; 0 picks a free one)",
    },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const portText = stringOption(ctx.options, "port") ?? "7430";
    const port = Number(portText);
    if (!/^\d{1,5}$/.test(portText) || port > 65535)
      throw usageError(
        `kumiki ui: ${ctx.optionName("port")} must be a number from 0 to 65535, got ${JSON.stringify(portText)}`,
      );
    const store = await ctx.openStore();
    const [capabilities, kept] = await Promise.all([ctx.capabilities(), ctx.keptChecks()]);
    // The first overview goes on from the check the last call kept, when the graph is still there.
    const view = liveView(store, {
      ...(capabilities === undefined ? {} : { check: { capabilities } }),
      ...(kept === undefined ? {} : { kept }),
      // Only this machine's names: a page of another site that resolves its own name to 127.0.0.1
      // (DNS rebinding) is refused, since the graph is not its to read.
      allowedHosts: LOOPBACK_NAMES,
    });
    const server = http.createServer((req, res) => {
      const pathname = new URL(req.url ?? "/", "http://127.0.0.1").pathname;
      // A call in its own process may have just written beside the document (a pending bundle):
      // taken in before the answer, so that it shows what that call's answer said it stored.
      void store
        .fence()
        .catch(() => undefined)
        .then(() => view.handle(req, res, pathname.replace(/^\/+/, "")));
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(port, "127.0.0.1", () => resolve());
    }).catch((e: NodeJS.ErrnoException) => {
      view.close();
      throw failure(
        e.code === "EADDRINUSE" ? "port-in-use" : "listen-failed",
        e.code === "EADDRINUSE"
          ? `kumiki ui: port ${port} on 127.0.0.1 is taken: give another with ${ctx.optionName("port")} (0 picks a free one)`
          : `kumiki ui: cannot listen on 127.0.0.1:${port}: ${e.message}`,
      );
    });
    const bound = (server.address() as AddressInfo).port;
    const url = `http://127.0.0.1:${bound}/`;
    // Listened for before the first line says where: a SIGTERM sent on reading it stops cleanly.
    const stopped = untilStopped();
    ctx.io.stdout(
      ctx.json ? `${JSON.stringify({ listening: { url, port: bound } })}\n` : `live view on ${url}\n`,
    );
    const signal = await stopped;
    view.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    return { json: { stopped: signal, url }, text: `stopped on ${signal}` };
  },
};
