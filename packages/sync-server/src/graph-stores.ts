/**
 * The server's own stores: a core `Store` over a graph the server holds, so that an edge on the
 * server (MCP over HTTP) reads and writes the server's copy itself, not a workspace synced to it. A
 * write is appended to the graph's document in the server's Repo and flushed through its storage
 * (fsynced on a folder, committed on PostgreSQL) before it is answered; automerge-repo then sends
 * it to the graph's connected peers, and other servers of the database take it in from the
 * storage, as they take a pushed change. Ops that reach the document otherwise (a peer's push,
 * another server) arrive in the store as another process's do in a workspace. One store per graph,
 * opened on first use, checked by the same gate as a workspace's (the checker), closed with the
 * server.
 */
import type { DocHandle, Repo } from "@automerge/automerge-repo";
import {
  type CapabilityManifest,
  createCheckGate,
  type IdempotencyLedger,
  openStore,
  type Store,
} from "@kumiki-graph/core";
import { type OpLogDocument, RepoOpLog } from "@kumiki-graph/storage-automerge";
import { fail, ok, type SyncResult } from "./result.js";

/** The author of a server store's writes made outside any client's context (none today). */
export const SERVER_AUTHOR = "server:kumiki";

/** The stores of the graphs a server holds, opened on first use. */
export class GraphStores {
  private readonly opened = new Map<string, Promise<SyncResult<Store>>>();
  private closed = false;

  constructor(
    private readonly repo: Repo,
    private readonly host: {
      /** The graph's handle, loaded from storage (or answered unavailable). */
      readonly handleOf: (documentId: string) => Promise<DocHandle<unknown>>;
      /** Told after the server's store appended to a graph (the peers' change check re-reads its shape). */
      readonly appended: (documentId: string) => void;
      /** Takes into the graph's handle every change the storage holds (other servers' included). */
      readonly catchUp: (documentId: string) => Promise<void>;
      /** Takes into the graph's handle every change the storage held when called, cheaply. */
      readonly fence: (documentId: string) => Promise<void>;
      /** Where the graph's idempotency keys are kept (shared by the servers of a database). */
      readonly ledgerOf: (documentId: string) => IdempotencyLedger;
      /** The capability manifest every graph is checked with (a workspace's kumiki.caps.json). */
      readonly capabilities?: CapabilityManifest;
    },
  ) {}

  /** The store of `graph` (`automerge:<id>` or the id), or `graph-unavailable` when the server has none. */
  open(graph: string): Promise<SyncResult<Store>> {
    const documentId = graph.startsWith("automerge:") ? graph.slice("automerge:".length) : graph;
    if (this.closed) return Promise.resolve(fail("graph-unavailable", "the server is shutting down"));
    let store = this.opened.get(documentId);
    if (store === undefined) {
      store = this.openNow(documentId);
      this.opened.set(documentId, store);
      // A graph that could not be opened is asked for again next time (it may have been pushed since).
      void store.then((r) => {
        if (!r.ok) this.opened.delete(documentId);
      });
    }
    return store;
  }

  private async openNow(documentId: string): Promise<SyncResult<Store>> {
    const handle = await this.host.handleOf(documentId).catch(() => undefined);
    if (handle === undefined || !handle.isReady())
      return fail(
        "graph-unavailable",
        `this server holds no graph automerge:${documentId} (push one with kumiki sync, or check the address)`,
      );
    let log: RepoOpLog;
    try {
      log = RepoOpLog.attach(this.repo, handle as DocHandle<OpLogDocument>, {
        onAppend: () => this.host.appended(documentId),
        catchUp: () => this.host.catchUp(documentId),
        fence: () => this.host.fence(documentId),
      });
    } catch (e) {
      return fail("graph-unavailable", (e as Error).message);
    }
    const store = openStore({
      log,
      author: SERVER_AUTHOR,
      validators: [
        createCheckGate(this.host.capabilities === undefined ? {} : { capabilities: this.host.capabilities }),
      ],
      // Kept where every server of the storage finds them: a retry through another server, or
      // after a restart, is answered with the first write's receipt.
      idempotency: this.host.ledgerOf(documentId),
    });
    if (!store.ok) return fail("graph-unavailable", store.error.message);
    return ok(store.value);
  }

  /** Closes every store (after its writes in flight); the Repo stays the server's. */
  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.opened.values()];
    this.opened.clear();
    for (const r of await Promise.all(all)) if (r.ok) await r.value.close().catch(() => undefined);
  }
}
