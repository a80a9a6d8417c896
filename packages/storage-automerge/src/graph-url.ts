// Where a graph is on a sync server: the page's opener and the sync client (sync-server) build it alike.

/**
 * The WebSocket URL a client of `graph` connects to on `server`: the server's URL and
 * `/g/<graph>` (an HTTP proxy in front of several servers routes each graph by its path), with
 * `?token=` when a token is given (for clients that cannot set an `Authorization` header).
 */
export function graphSocketUrl(server: string, graph: string, token?: string): string {
  const g = graph.startsWith("automerge:") ? graph : `automerge:${graph}`;
  const url = `${server.replace(/\/+$/, "")}/g/${g}`;
  return token === undefined ? url : `${url}?token=${encodeURIComponent(token)}`;
}
