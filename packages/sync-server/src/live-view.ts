/**
 * The live view of a graph over HTTP (`kumiki ui`; issue 41): a page, the graph's overview and a
 * definition's page as JSON (core's `graphOverview`, `definitionPage`), and server-sent events that
 * say when the graph changed. Read-only unless the mount says who may write: then `POST
 * api/write` takes the verbs the page offers (replace, revert, unlock), each one store call
 * authored by that writer. It holds no semantics: every answer is one core call rendered as JSON.
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
  type KeptChecks,
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
  /** Checks kept by other processes, the first overview goes on from (see core's `OverviewOptions`). */
  readonly kept?: KeptChecks;
  /**
   * The Host names the view answers to (without the port; IPv6 in brackets). A view on a loopback
   * address should allow only loopback names ({@link LOOPBACK_NAMES}): a page of another site that
   * points its own name at 127.0.0.1 (DNS rebinding) is then refused, 403. Default: any.
   */
  readonly allowedHosts?: readonly string[];
}

/**
 * This machine's names, what a view on a loopback address answers to (the MCP endpoints' list,
 * `@kumiki-graph/mcp`'s `LOOPBACK_HOSTS`, is the same: neither package may depend on the other).
 */
export const LOOPBACK_NAMES: readonly string[] = ["127.0.0.1", "localhost", "[::1]"];

/** A Host header's name, without its port. */
function hostName(host: string): string {
  return host.startsWith("[") ? host.slice(0, host.indexOf("]") + 1) : host.replace(/:\d+$/, "");
}

/**
 * Answers 403 (and says true) when the request's Host is not one of `allowed` (any, when
 * undefined): what a view, or the routes in front of several, checks first.
 */
export function refusedHost(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  allowed: readonly string[] | undefined,
): boolean {
  const host = req.headers.host ?? "";
  if (allowed === undefined || allowed.includes(hostName(host))) return false;
  json(res, 403, {
    error: {
      code: "forbidden",
      message: `the Host ${JSON.stringify(host.slice(0, 100))} is not one this view answers to`,
    },
  });
  return true;
}

/** Who may write through a request (the mount decides: a token that grants writing). */
export interface LiveViewWriter {
  /** The author its ops are written as (the token's name). */
  readonly author: string;
}

/** A live view of one store: an HTTP handler, and `close` to stop following the store. */
export interface LiveView {
  /**
   * Answers a request whose path, below wherever the view is mounted, is `rest` (`""` or
   * `index.html` for the page, `api/overview`, `api/definitions/<def>`, `api/events`, `api/me`,
   * and with `writer`, `POST api/write`).
   */
  handle(req: http.IncomingMessage, res: http.ServerResponse, rest: string, writer?: LiveViewWriter): void;
  /** Ends every event stream and stops following the store. */
  close(): void;
}

/**
 * A live view of `store` (see the module comment). It follows the store — its own writes at once,
 * another process's within 200 ms — and tells each open page the new version by a
 * server-sent event; the page then asks for the overview again. The overview is computed once per
 * version, however many pages ask.
 */
export function liveView(store: Store, options: LiveViewOptions = {}): LiveView {
  const versions = followVersions(store);
  let cached: { version: string; body: string } | undefined;
  const overview = (): string => {
    const version = headsOf(store);
    if (cached?.version !== version) {
      const o: GraphOverview = graphOverview(store, {
        ...(options.check === undefined ? {} : { check: options.check }),
        ...(options.recent === undefined ? {} : { recent: options.recent }),
        ...(options.kept === undefined ? {} : { kept: options.kept }),
      });
      cached = { version: o.version, body: JSON.stringify(o) };
    }
    return cached.body;
  };
  return {
    handle(req, res, rest, writer) {
      if (refusedHost(req, res, options.allowedHosts)) return;
      if (rest === "api/write" && req.method === "POST") {
        if (writer === undefined) {
          json(res, 403, {
            error: {
              code: "read-only",
              message: "this view only reads: writing takes a token that grants it",
            },
          });
          return;
        }
        void write(store, req, writer).then(({ status, body }) => json(res, status, body));
        return;
      }
      if (req.method !== "GET" && req.method !== "HEAD") {
        json(res, 405, { error: { code: "read-only", message: "the live view only reads here: use GET" } });
        return;
      }
      if (rest === "api/me") {
        json(res, 200, writer === undefined ? { write: false } : { write: true, author: writer.author });
        return;
      }
      if (serveAsset(res, rest)) return;
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
        versions.stream(req, res);
        return;
      }
      json(res, 404, {
        error: {
          code: "not-found",
          message: `nothing at ${JSON.stringify(rest.slice(0, 100))} in the live view`,
        },
      });
    },
    close: () => versions.close(),
  };
}

/** The page's files (and no favicon); false when `rest` names none. */
function serveAsset(res: http.ServerResponse, rest: string): boolean {
  if (rest === "favicon.ico") {
    res.writeHead(204).end();
    return true;
  }
  if (rest !== "" && !(rest in ASSETS)) return false;
  const name = rest === "" ? "index.html" : rest;
  res.writeHead(200, { "content-type": ASSETS[name]!, "cache-control": "no-cache" });
  res.end(fs.readFileSync(path.join(UI_DIR, name)));
  return true;
}

/**
 * The event streams of a store's version: each open stream is told the graph's heads when they
 * change — at once for the store's own writes, within {@link POLL_MS} for another process's.
 */
function followVersions(store: Store): {
  stream(req: http.IncomingMessage, res: http.ServerResponse): void;
  close(): void;
} {
  const streams = new Set<http.ServerResponse>();
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
    stream(req, res) {
      res.writeHead(200, {
        "content-type": "text/event-stream",
        "cache-control": "no-store",
        connection: "keep-alive",
      });
      res.write(`event: version\ndata: ${JSON.stringify(headsOf(store))}\n\n`);
      streams.add(res);
      req.on("close", () => streams.delete(res));
    },
    close() {
      clearInterval(timer);
      off();
      for (const res of streams) res.end();
      streams.clear();
    },
  };
}

/** At most this much JSON is read of a write request. */
const WRITE_BYTES = 1 << 20;

/**
 * One write the page asked for: `{verb: "replace", qname, source}`, `{verb: "revert", opId}` or
 * `{verb: "unlock", agent, patterns}`, as the store's own verb (which validates the rest). A
 * request from another origin, not JSON, too large, or of another verb changes nothing.
 */
async function write(
  store: Store,
  req: http.IncomingMessage,
  writer: LiveViewWriter,
): Promise<{ status: number; body: unknown }> {
  const refuse = (status: number, code: string, message: string) => ({
    status,
    body: { error: { code, message } },
  });
  // A page of another site cannot write here: its request names its own origin (and a JSON body
  // is never sent across origins without a preflight this server does not answer).
  const origin = req.headers.origin;
  if (origin !== undefined && hostOf(origin) !== req.headers.host)
    return refuse(403, "forbidden", `a page of ${origin.slice(0, 100)} may not write to this graph`);
  if (!/^application\/json\b/.test(req.headers["content-type"] ?? ""))
    return refuse(415, "invalid-input", "send the write as application/json");
  let text = "";
  for await (const chunk of req) {
    text += String(chunk);
    if (text.length > WRITE_BYTES)
      return refuse(413, "too-large", `a write is at most ${WRITE_BYTES} bytes of JSON`);
  }
  let w: Record<string, unknown>;
  try {
    w = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return refuse(400, "invalid-input", "the write is not JSON");
  }
  if (typeof w !== "object" || w === null) return refuse(400, "invalid-input", "the write is not an object");
  const as = { author: writer.author };
  const { verb, ...input } = w;
  const done =
    verb === "replace"
      ? await store.replace(input as never, as)
      : verb === "revert" && typeof input.opId === "string"
        ? await store.revert(input.opId, as)
        : verb === "unlock"
          ? await store.unlock(input as never, as)
          : undefined;
  if (done === undefined)
    return refuse(
      400,
      "invalid-input",
      'give verb "replace" {qname, source}, "revert" {opId} or "unlock" {agent, patterns}',
    );
  return done.ok ? { status: 200, body: done.value } : { status: 409, body: { error: done.error } };
}

/** The host of an origin (`null` and other non-URLs: none). */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host;
  } catch {
    return undefined;
  }
}

function headsOf(store: Store): string {
  return [...store.read().graph.heads()].sort().join(",");
}

function json(res: http.ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { "content-type": "application/json", "cache-control": "no-store" });
  res.end(JSON.stringify(body));
}
