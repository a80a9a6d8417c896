/**
 * A graph's store in a page: the graph document in a Repo over automerge-repo's IndexedDB storage
 * adapter (so a reload finds every write the page was told was stored), optionally synced live with
 * a `kumiki serve` over WebSocket with a token, and the core store over it (the checker as its write
 * gate, as in Node). Node-free: the browser entry's one opener.
 *
 * What "stored" means here: an append resolves once IndexedDB committed the transaction holding it
 * (the adapter's `save` waits for `oncomplete`). Reaching the server is live and in the background,
 * as with `kumiki sync --live`: the server checks and stores what the page sends, and the page takes
 * in what others wrote as it arrives (the store's `onChange` fires). The WebSocket client is
 * automerge-repo's, an optional peer dependency: install it to give a `server`.
 */
import {
  type AutomergeUrl,
  type DocHandle,
  isValidAutomergeUrl,
  type NetworkAdapterInterface,
  Repo,
} from "@automerge/automerge-repo";
import { IndexedDBStorageAdapter } from "@automerge/automerge-repo-storage-indexeddb";
import { isAuthorId, openStore, type Store, type StoreOptions } from "@kumiki-graph/core";
import { quoted } from "@kumiki-graph/core/rejection";
import { graphSocketUrl } from "./graph-url.js";
import { emptyOpLogDocument, type OpLogDocument } from "./op-log-document.js";
import { OpLogOpenError, RepoOpLog } from "./repo-op-log.js";

/** A sync server to keep the page's graph in step with. */
export interface BrowserServer {
  /** The server, `ws://host:port` or `wss://…` (with a path when it is behind a proxy). */
  readonly url: string;
  /** The token, when the server wants one (sent as `?token=`: a page's WebSocket cannot set headers). */
  readonly token?: string;
}

/** How {@link openBrowserStore} opens a graph. */
export interface BrowserStoreOptions extends Omit<StoreOptions, "log"> {
  /**
   * The graph (`automerge:…`): held in this page's IndexedDB, or else fetched from the server.
   * Absent: a new, empty graph (its URL is {@link BrowserStore.graph}; keep it to open it again).
   */
  readonly graph?: string;
  /** The IndexedDB database (default "kumiki"); one database holds any number of graphs. */
  readonly database?: string;
  /** Keep the graph in step with this server, live, while the store is open. */
  readonly server?: BrowserServer;
  /** Other network adapters for the page's Repo (a BroadcastChannel between tabs, …). */
  readonly network?: readonly NetworkAdapterInterface[];
  /** How long to wait for a graph this page does not hold to arrive from the network, ms (default 10 000). */
  readonly timeoutMs?: number;
}

/** A graph's store open in a page. */
export interface BrowserStore {
  readonly store: Store;
  /** The graph's URL (what a workspace's `.kumiki/config.json` and `kumiki clone` name). */
  readonly graph: AutomergeUrl;
  readonly log: RepoOpLog;
  /** The page's Repo (IndexedDB storage, the server's socket); closed by {@link close}. */
  readonly repo: Repo;
  /** Stores what is pending, closes the store and shuts the Repo down (the socket with it). */
  close(): Promise<void>;
}

/** Why {@link openBrowserStore} did not open. Nothing was written. */
export interface BrowserStoreError {
  readonly code:
    | "invalid-url"
    | "invalid-author"
    | "graph-unavailable"
    | "store-corrupt"
    | "store-unsupported"
    | "storage-failed"
    | "network-missing";
  readonly message: string;
  readonly details?: Readonly<Record<string, unknown>>;
}

const DEFAULT_TIMEOUT_MS = 10_000;

/** A server URL a page can open a socket to, or why not. */
function serverUrlProblem(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return `${JSON.stringify(url)} is not a URL: expected ws://host:port or wss://host:port`;
  }
  if (parsed.protocol !== "ws:" && parsed.protocol !== "wss:")
    return `${JSON.stringify(url)} is not a WebSocket URL: expected ws://host:port or wss://host:port`;
  if (parsed.search !== "" || parsed.hash !== "")
    return `${JSON.stringify(url)} has a query or fragment: give the server's URL alone (the token goes in \`token\`)`;
  return undefined;
}

type Opened<T> = { ok: true; value: T } | { ok: false; error: BrowserStoreError };

function fail(
  code: BrowserStoreError["code"],
  message: string,
  details?: Record<string, unknown>,
): { ok: false; error: BrowserStoreError } {
  return { ok: false, error: { code, message, ...(details === undefined ? {} : { details }) } };
}

/**
 * Why `options` cannot open, before anything is opened (a bad author is not told after a 10 s
 * fetch), or undefined.
 */
function inputProblem(options: BrowserStoreOptions): { ok: false; error: BrowserStoreError } | undefined {
  const { graph, server, author } = options;
  if (!isAuthorId(author))
    return fail(
      "invalid-author",
      `invalid author ${quoted(author)}: expected kind:name, e.g. user:ada or agent:claude-1 (nothing was opened)`,
      { author },
    );
  if (graph !== undefined && !isValidAutomergeUrl(graph))
    return fail("invalid-url", `${JSON.stringify(graph)} is not a graph URL: expected automerge:…`, {
      graph,
    });
  const problem = server === undefined ? undefined : serverUrlProblem(server.url);
  if (problem !== undefined) return fail("invalid-url", problem, { url: server?.url });
  if (server !== undefined && graph === undefined)
    return fail(
      "invalid-url",
      "a new graph cannot be opened with a server: give the server's graph (`graph`), or open without a server",
    );
  return undefined;
}

/**
 * The socket to `server` for `graph` (none without a server). Loaded only then: the adapter is an
 * optional peer dependency, so that a Node user of this package (the CLI) does not install a
 * WebSocket client it never uses.
 */
async function socketsTo(
  server: BrowserServer | undefined,
  graph: string | undefined,
): Promise<Opened<NetworkAdapterInterface[]>> {
  if (server === undefined || graph === undefined) return { ok: true, value: [] };
  let adapter: typeof import("@automerge/automerge-repo-network-websocket");
  try {
    adapter = await import("@automerge/automerge-repo-network-websocket");
  } catch (e) {
    return fail(
      "network-missing",
      `syncing with a server needs automerge-repo's WebSocket adapter: npm install @automerge/automerge-repo-network-websocket (${(e as Error).message})`,
    );
  }
  return {
    ok: true,
    value: [new adapter.BrowserWebSocketClientAdapter(graphSocketUrl(server.url, graph, server.token))],
  };
}

/** The graph's document in `repo`: found (IndexedDB, else the network), or a new one made and stored. */
async function graphDocument(
  repo: Repo,
  options: BrowserStoreOptions,
): Promise<Opened<DocHandle<OpLogDocument>>> {
  const { graph, server, database = "kumiki", timeoutMs = DEFAULT_TIMEOUT_MS } = options;
  try {
    if (graph !== undefined)
      return {
        ok: true,
        value: await repo.find<OpLogDocument>(graph as AutomergeUrl, {
          signal: AbortSignal.timeout(timeoutMs),
        }),
      };
    const handle = repo.create<OpLogDocument>(emptyOpLogDocument());
    await repo.flush([handle.documentId]);
    return { ok: true, value: handle };
  } catch (e) {
    const why = (e as Error).message;
    if (graph === undefined)
      return fail("storage-failed", `IndexedDB did not store the new graph (${why}); nothing was written`);
    const from =
      server === undefined
        ? "no server was given to fetch it from"
        : `${server.url} did not provide it within ${Math.round(timeoutMs / 1000)} s`;
    return fail(
      "graph-unavailable",
      `the graph ${graph} is not in this page's IndexedDB (${database}) and ${from} (${why})`,
      { graph, database },
    );
  }
}

/**
 * Opens a graph's store in a page (see the module comment): the graph `options.graph` from the
 * page's IndexedDB or the server, or a new one. Refusals are values; nothing is written by one.
 */
export async function openBrowserStore(
  options: BrowserStoreOptions,
): Promise<{ ok: true; value: BrowserStore } | { ok: false; error: BrowserStoreError }> {
  const refused = inputProblem(options);
  if (refused !== undefined) return refused;
  const { graph, database = "kumiki", server, network = [], timeoutMs: _t, ...storeOptions } = options;
  const sockets = await socketsTo(server, graph);
  if (!sockets.ok) return sockets;
  const repo = new Repo({
    storage: new IndexedDBStorageAdapter(database),
    network: [...sockets.value, ...network],
  });
  const shut = async <E>(e: E) => {
    await repo.shutdown().catch(() => undefined);
    return e;
  };
  const handle = await graphDocument(repo, options);
  if (!handle.ok) return shut(handle);
  let log: RepoOpLog;
  try {
    log = RepoOpLog.attach(repo, handle.value);
  } catch (e) {
    if (!(e instanceof OpLogOpenError)) throw e;
    return shut(fail(e.code === "store-unsupported" ? "store-unsupported" : "store-corrupt", e.message));
  }
  const opened = openStore({ ...storeOptions, log });
  if (!opened.ok) {
    await log.close();
    return shut(fail("invalid-author", opened.error.message, opened.error.details));
  }
  const store = opened.value;
  const close = async () => {
    // The store closes its log (the document flushed to IndexedDB); the Repo is ours to shut.
    await store.close();
    await repo.shutdown();
  };
  return { ok: true, value: { store, graph: handle.value.url, log, repo, close } };
}
