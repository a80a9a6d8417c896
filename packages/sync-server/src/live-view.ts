/**
 * The live view of a graph over HTTP (`kumiki ui`; issue 41): a page, the graph's overview and a
 * definition's page as JSON (core's `graphOverview`, `definitionPage`), and server-sent events that
 * say when the graph changed. Read-only: it answers GET and nothing else. It holds no semantics:
 * every answer is one core call rendered as JSON.
 */
import fs from "node:fs";
import type http from "node:http";
import path from "node:path";
import { fileURLToPath } from "node:url";
import {
  type CheckOptions,
  definitionPage,
  type GraphOverview,
  graphOverview,
  type Store,
} from "@kumiki-graph/core";

/** The page's files, shipped in the package's `ui/` folder. */
const UI_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), "..", "ui");

const ASSETS: Readonly<Record<string, string>> = {
  "index.html": "text/html; charset=utf-8",
  "app.js": "text/javascript; charset=utf-8",
  "map.js": "text/javascript; charset=utf-8",
  "style.css": "text/css; charset=utf-8",
};

/** How often a change made by another process is looked for (one small file read when none). */
const POLL_MS = 200;

/** Options of {@link liveView}. */
export interface LiveViewOptions {
  /** The check the findings come from (the workspace's capability manifest). */
  readonly check?: CheckOptions;
  /** How many of the latest ops the activity lists (default 500). */
  readonly recent?: number;
}

/** A live view of one store: an HTTP handler, and `close` to stop following the store. */
export interface LiveView {
  /**
   * Answers a request whose path, below wherever the view is mounted, is `rest` (`""` or
   * `index.html` for the page, `api/overview`, `api/definitions/<def>`, `api/events`).
   */
  handle(req: http.IncomingMessage, res: http.ServerResponse, rest: string): void;
  /** Ends every event stream and stops following the store. */
  close(): void;
}

/**
 * A live view of `store` (see the module comment). It follows the store — its own writes at once,
 * another process's within {@link POLL_MS} — and tells each open page the new version by a
 * server-sent event; the page then asks for the overview again. The overview is computed once per
 * version, however many pages ask.
 */
export function liveView(store: Store, options: LiveViewOptions = {}): LiveView {
  const streams = new Set<http.ServerResponse>();
  let cached: { version: string; body: string } | undefined;
  const overview = (): string => {
    const version = headsOf(store);
    if (cached?.version !== version) {
      const o: GraphOverview = graphOverview(store, {
        ...(options.check === undefined ? {} : { check: options.check }),
        ...(options.recent === undefined ? {} : { recent: options.recent }),
      });
      cached = { version: o.version, body: JSON.stringify(o) };
    }
    return cached.body;
  };
  let last = headsOf(store);
  const tell = (): void => {
    const now = headsOf(store);
    if (now === last) return;
    last = now;
    for (const res of streams) res.write(`event: version\ndata: ${JSON.stringify(now)}\n\n`);
  };
  const off = store.onChange(() => tell());
  const timer = setInterval(() => {
    try {
      store.refresh();
      tell();
    } catch {
      // A store that cannot be read now (a repair in progress): the next look tries again.
    }
  }, POLL_MS);
  timer.unref();
  return {
    handle(req, res, rest) {
      if (req.method !== "GET" && req.method !== "HEAD") {
        json(res, 405, { error: { code: "read-only", message: "the live view only reads: use GET" } });
        return;
      }
      if (rest === "" || rest in ASSETS) {
        const name = rest === "" ? "index.html" : rest;
        res.writeHead(200, { "content-type": ASSETS[name]!, "cache-control": "no-cache" });
        res.end(fs.readFileSync(path.join(UI_DIR, name)));
        return;
      }
      if (rest === "favicon.ico") {
        res.writeHead(204).end();
        return;
      }
      if (rest === "api/overview") {
        res.writeHead(200, { "content-type": "application/json", "cache-control": "no-store" });
        res.end(overview());
        return;
      }
      if (rest.startsWith("api/definitions/")) {
        const page = definitionPage(store, decodeURIComponent(rest.slice("api/definitions/".length)), {
          ...(options.check === undefined ? {} : { check: options.check }),
        });
        json(res, page.ok ? 200 : 404, page.ok ? page.value : { error: page.error });
        return;
      }
      if (rest === "api/events") {
        res.writeHead(200, {
          "content-type": "text/event-stream",
          "cache-control": "no-store",
          connection: "keep-alive",
        });
        res.write(`event: version\ndata: ${JSON.stringify(headsOf(store))}\n\n`);
        streams.add(res);
        req.on("close", () => streams.delete(res));
        return;
      }
      json(res, 404, {
        error: {
          code: "not-found",
          message: `nothing at ${JSON.stringify(rest.slice(0, 100))} in the live view`,
        },
      });
    },
    close() {
      clearInterval(timer);
      off();
      for (const res of streams) res.end();
      streams.clear();
    },
  };
}

function headsOf(store: Store): string {
  return [...store.read().graph.heads()].sort().join(",");
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
