/**
 * The live view of every graph a sync server holds: `/g/<graph>/` on the server's own port (beside
 * `/g/<graph>/mcp`), over the server's own store of it, under the same tokens as sync. Any grant on
 * the graph (read or write) may look, and a token that grants writing may write through the page
 * (as its name: the verbs of `LiveView`). A browser cannot send a header on
 * opening a page, so a page is opened once with `?token=…`: the server answers with a cookie for
 * that graph's path only (HttpOnly, SameSite=Strict) and sends the browser to the same page
 * without the token, so the token stays out of its history; the page's own requests carry the
 * cookie.
 */
import type http from "node:http";
import { type CheckOptions, isAuthorId } from "@kumiki-graph/core";
import { type LiveView, liveView, refusedHost } from "./live-view.js";
import type { SyncServer } from "./server.js";

/** The page, its assets and its API under a graph: `/g/automerge:<id>/…`, but not its MCP endpoint. */
const ROUTE = /^\/g\/(automerge:[1-9A-HJ-NP-Za-km-z]+)(?:\/(.*))?$/;

const COOKIE = "kumiki_view_token";

/** The live views of a server's graphs. */
export interface LiveViewRoutes {
  /** Serves `req` when it is for a graph's live view (true), else leaves it (false). */
  route(req: http.IncomingMessage, res: http.ServerResponse, server: SyncServer): boolean;
  /** Stops following every graph. */
  close(): void;
}

/** The live views of a server's graphs (see the module comment); `check` as the server's stores check. */
export function liveViewRoutes(
  options: { readonly check?: CheckOptions; readonly allowedHosts?: readonly string[] } = {},
): LiveViewRoutes {
  const views = new Map<string, Promise<LiveView | { code: string; message: string }>>();
  const viewOf = (graph: string, server: SyncServer) => {
    let v = views.get(graph);
    if (v === undefined) {
      v = server.openStore(graph).then((opened) => {
        if (!opened.ok) {
          views.delete(graph);
          return opened.error;
        }
        // The Host is checked here, before the token: the views behind need not again.
        const { allowedHosts: _checked, ...viewOptions } = options;
        return liveView(opened.value, viewOptions);
      });
      views.set(graph, v);
    }
    return v;
  };
  return {
    route(req, res, server) {
      const url = new URL(req.url ?? "/", "http://x");
      const m = ROUTE.exec(url.pathname);
      if (m === null || m[2] === "mcp" || m[2]?.startsWith("mcp/")) return false;
      if (refusedHost(req, res, options.allowedHosts)) return true;
      const graph = m[1]!;
      const base = `/g/${graph}/`;
      if (m[2] === undefined) {
        // `/g/<graph>` → `/g/<graph>/`: the page's relative requests resolve below it.
        res.writeHead(308, { location: `${base}${url.search}` }).end();
        return true;
      }
      // A token in the query (a page opened with it) or a header (a script) is what the request
      // presents; the cookie only stands in for neither.
      const given = url.searchParams.get("token");
      const token = given ?? (req.headers.authorization === undefined ? cookieOf(req, COOKIE) : undefined);
      const access = server.accessOf(withToken(req, token), graph);
      if (!access.ok) {
        res.writeHead(access.status, { "content-type": "application/json" });
        res.end(
          `${JSON.stringify({ error: { code: access.status === 401 ? "unauthorized" : "forbidden", message: `${access.message} (a browser: open ${base}?token=<token> once)` } })}\n`,
        );
        return true;
      }
      if (given !== null && !access.open) {
        url.searchParams.delete("token");
        res.writeHead(303, {
          "set-cookie": `${COOKIE}=${encodeURIComponent(given)}; Path=${base}; HttpOnly; SameSite=Strict`,
          location: `${url.pathname}${url.search}`,
          "cache-control": "no-store",
        });
        res.end();
        return true;
      }
      // Writing takes a token that grants it (an open server's anyone presented none), named as an author.
      const writer =
        access.open !== true && access.access === "write" && isAuthorId(access.name)
          ? { author: access.name }
          : undefined;
      void viewOf(graph, server).then((v) => {
        if ("handle" in v) v.handle(req, res, m[2]!, writer);
        else {
          res.writeHead(404, { "content-type": "application/json" });
          res.end(`${JSON.stringify({ error: v })}\n`);
        }
      });
      return true;
    },
    close() {
      for (const v of views.values()) void v.then((view) => ("close" in view ? view.close() : undefined));
      views.clear();
    },
  };
}

/** The value of cookie `name` in the request, if any. */
function cookieOf(req: http.IncomingMessage, name: string): string | undefined {
  for (const part of (req.headers.cookie ?? "").split(";")) {
    const [k, ...v] = part.trim().split("=");
    if (k === name) return decodeURIComponent(v.join("="));
  }
  return undefined;
}

/**
 * The request as the server's access check reads it, presenting `token` the way a client would (a
 * bearer header), so that a cookie's token is judged exactly as a header's.
 */
function withToken(req: http.IncomingMessage, token: string | undefined): http.IncomingMessage {
  if (token === undefined) return req;
  return { headers: { authorization: `Bearer ${token}` }, url: "/" } as unknown as http.IncomingMessage;
}
