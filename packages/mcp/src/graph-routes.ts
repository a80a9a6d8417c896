/**
 * MCP for every graph a sync server holds: `/g/<graph>/mcp` on the server's own port, each graph
 * an endpoint of http.ts over the server's own store of it (not a workspace synced to it), under
 * the same tokens and grants as sync. A token that grants read access gets a read-only session; a
 * token for one graph cannot open another; each session's writes are authored by its token's name;
 * a withdrawn token ends its sessions when the tokens change ({@link McpGraphRoutes.review}) and is
 * refused at its next request in any case.
 *
 * The host is the sync server, described here by what this needs of it ({@link GraphHost}), so this
 * package does not depend on the sync server's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type CapabilityManifest, isAuthorId, type Store } from "@kumiki-graph/core";
import { type HttpAccess, type McpHttpHandler, mcpHttpHandler, refuse } from "./http.js";
import { type Limits, resolveLimits } from "./limits.js";
import { DEFAULT_AUTHOR } from "./server.js";

/** What the MCP endpoints need of the server that holds the graphs (a `SyncServer` is one). */
export interface GraphHost {
  /** The server's own store of `graph` (`automerge:<id>`), or why there is none. */
  openStore(
    graph: string,
  ): Promise<{ ok: true; value: Store } | { ok: false; error: { code: string; message: string } }>;
  /** What the request's token grants on `graph`. */
  accessOf(
    req: IncomingMessage,
    graph: string,
  ):
    | {
        readonly ok: true;
        readonly name: string;
        readonly access: "read" | "write";
        /** Granted because the host takes no tokens: writes are then authored `agent:mcp`. */
        readonly open?: true;
      }
    | { readonly ok: false; readonly status: 401 | 403; readonly message: string };
}

/** How {@link mcpGraphRoutes} serves. */
export interface McpGraphRoutesOptions {
  /** Limits other than the defaults (kumiki://limits), for every graph. */
  readonly limits?: Readonly<Record<string, number>>;
  /** The operator's log. */
  readonly log?: (line: string) => void;
  /** Browser origins allowed (see http.ts); default none. */
  readonly allowedOrigins?: readonly string[];
  /** Host names allowed (see http.ts); default any. */
  readonly allowedHosts?: readonly string[];
  /**
   * The capability manifest `kumiki_check` and `kumiki_fix_*` judge every graph by (the one the
   * server's stores check writes with: `SyncServerOptions.capabilities`); default none.
   */
  readonly capabilities?: CapabilityManifest;
}

/** The MCP endpoints of a server's graphs. */
export interface McpGraphRoutes {
  /** Serves `req` when it is for `/g/<graph>/mcp` (true), else leaves it (false). */
  route(req: IncomingMessage, res: ServerResponse, host: GraphHost): boolean;
  /** Ends the sessions whose token no longer grants what it did (call when the tokens change). */
  review(): Promise<void>;
  /** Ends every session of every graph. */
  close(): Promise<void>;
}

/** The endpoint path of a graph: `/g/automerge:<id>/mcp`, the sync socket's path plus `/mcp`. */
const ROUTE = /^\/g\/(automerge:[1-9A-HJ-NP-Za-km-z]+)\/mcp\/?$/;

/** Builds the MCP endpoints of a server's graphs (limits checked here: a bad one is a startup error). */
export function mcpGraphRoutes(
  options: McpGraphRoutesOptions = {},
): { ok: true; value: McpGraphRoutes } | { ok: false; error: { code: string; message: string } } {
  const limits = resolveLimits(options.limits);
  if (!limits.ok) return { ok: false, error: { code: "invalid-limit", message: limits.message } };
  const log = options.log ?? ((line: string) => process.stderr.write(`kumiki mcp: ${line}\n`));
  const handlers = new Map<string, Promise<McpHttpHandler | { code: string; message: string }>>();
  const handlerOf = (graph: string, host: GraphHost) => {
    let h = handlers.get(graph);
    if (h === undefined) {
      h = host.openStore(graph).then((opened) => {
        if (!opened.ok) {
          handlers.delete(graph);
          return opened.error;
        }
        return endpoint(graph, opened.value, host, limits.value);
      });
      handlers.set(graph, h);
    }
    return h;
  };
  const endpoint = (graph: string, store: Store, host: GraphHost, l: Limits): McpHttpHandler =>
    mcpHttpHandler({
      graph: {
        store,
        limits: l,
        log: (line) => log(`${graph}: ${line}`),
        ...(options.capabilities === undefined ? {} : { capabilities: options.capabilities }),
      },
      ...(options.allowedOrigins === undefined ? {} : { allowedOrigins: options.allowedOrigins }),
      ...(options.allowedHosts === undefined ? {} : { allowedHosts: options.allowedHosts }),
      authorize: (req): HttpAccess => {
        const a = host.accessOf(req, graph);
        if (!a.ok) return a;
        const author = a.open === true ? DEFAULT_AUTHOR : a.name;
        if (!isAuthorId(author))
          return {
            ok: false,
            status: 403,
            message: `the token's name ${JSON.stringify(a.name)} cannot author ops (letters, digits and . _ : @ / + -): rename it in the token file`,
          };
        return { ok: true, name: a.name, readOnly: a.access === "read", author };
      },
    });
  return {
    ok: true,
    value: {
      route(req, res, host) {
        const graph = ROUTE.exec(new URL(req.url ?? "/", "http://x").pathname)?.[1];
        if (graph === undefined) return false;
        // The token first: a graph it may not see is not even loaded.
        const access = host.accessOf(req, graph);
        if (!access.ok) {
          refuse(
            res,
            access.status,
            -32000,
            access.message,
            access.status === 401 ? { "www-authenticate": "Bearer" } : {},
          );
          return true;
        }
        void handlerOf(graph, host).then((h) =>
          "handle" in h ? h.handle(req, res) : refuse(res, 404, -32000, h.message),
        );
        return true;
      },
      async review() {
        for (const h of handlers.values()) {
          const handler = await h;
          if ("handle" in handler) await handler.review();
        }
      },
      async close() {
        const all = [...handlers.values()];
        handlers.clear();
        for (const h of await Promise.all(all)) if ("handle" in h) await h.close();
      },
    },
  };
}
