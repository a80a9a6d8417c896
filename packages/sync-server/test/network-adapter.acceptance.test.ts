/**
 * automerge-repo's own network-adapter acceptance suite, run on this package's two WebSocket
 * adapters: the server's AccessControlledServerAdapter (one peer) and KumikiClientAdapter (the
 * other two), over a real WebSocket server on 127.0.0.1. The server's screening runs as in
 * production, with an open grant and a check that accepts every change: the suite's documents
 * are not Kumiki op logs, and what is under test is the adapters' network contract (sync between
 * two and three repos, messages addressed to one peer, ephemeral messages), not the op-log rules
 * (sync.test.ts and access.test.ts test those).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";
import { runNetworkAdapterTests } from "@automerge/automerge-repo/helpers/tests/network-adapter-tests.js";
import { WebSocketServer } from "ws";
import { KumikiClientAdapter } from "../src/client-adapter.js";
import { AccessControlledServerAdapter } from "../src/server-adapter.js";
import { OPEN_GRANT } from "../src/tokens.js";

runNetworkAdapterTests(async () => {
  const httpServer = http.createServer();
  const wss = new WebSocketServer({ server: httpServer });
  await new Promise<void>((resolve) => httpServer.listen(0, "127.0.0.1", resolve));
  const { port } = httpServer.address() as AddressInfo;
  const server = new AccessControlledServerAdapter(wss, {
    grantOf: () => OPEN_GRANT,
    check: async () => ({ ok: true, newOps: 0 }),
    flush: async () => [],
    onRefused: () => undefined,
  });
  const url = `ws://127.0.0.1:${port}`;
  const alice = new KumikiClientAdapter(url);
  const bob = new KumikiClientAdapter(url);
  const teardown = () => {
    alice.disconnect();
    bob.disconnect();
    server.disconnect();
    for (const c of wss.clients) c.terminate();
    wss.close();
    httpServer.close();
  };
  return { adapters: [alice, server, bob], teardown };
}, "Kumiki client and server WebSocket adapters");
