/**
 * `kumiki serve` in a container (issue 40): the repository's Containerfile, built with Debian's
 * podman from the context `scripts/container-context.mjs --offline` makes (the five packages packed
 * and installed as a user installs them), run with its configuration from KUMIKI_SERVE_* variables,
 * a token file mounted read-only and a data volume. A workspace syncs through it, /health and
 * /metrics answer, the image's health check passes, SIGTERM (`podman stop`) drains and exits 0, and
 * a new container on the same volume serves what the first stored.
 *
 * The base image is the Containerfile's `NODE_IMAGE` argument: users get node:20-bookworm-slim
 * from a registry, which these machines cannot reach, so the test makes one from this machine's
 * Node binary and the libraries it links (nothing else: no shell), cached under a name of its own.
 * The engine settings are what this sandbox needs (hybrid cgroups: runc with cgroupfs, not crun;
 * no raising of RLIMIT_NOFILE, so no default ulimits); they change nothing on a plain machine.
 * Without podman and runc the test skips, saying how to install them.
 */
import { execFileSync, spawnSync } from "node:child_process";
import fs from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { openWorkspaceStore } from "@kumiki-graph/storage-automerge";
import { cloneWorkspace, syncWorkspace } from "@kumiki-graph/sync-server";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { cleanup, tempDir } from "./support.js";

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
const INSTALL = "apt-get install -y podman runc (Debian's packages)";
const TOKEN = "container-token-0123456789abcdef";

function found(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
}
const engine = found("podman") && found("runc");

/** A free TCP port on 127.0.0.1 (the container shares the host's network). */
function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

describe.skipIf(!engine)(`kumiki serve in a container (without podman: ${INSTALL})`, () => {
  let root: string;
  let conf: string;
  const image = `localhost/kumiki-serve-test-${process.pid}`;
  let base = "";
  const names: string[] = [];

  /** Runs podman with this sandbox's settings; throws with its stderr on failure. */
  function podman(...args: string[]): string {
    const r = spawnSync("podman", ["--runtime", "runc", "--cgroup-manager", "cgroupfs", ...args], {
      encoding: "utf8",
      env: { ...process.env, CONTAINERS_CONF: conf },
      input: "",
      timeout: 180_000,
      maxBuffer: 64 * 1024 * 1024,
    });
    if (r.status !== 0)
      throw new Error(`podman ${args.slice(0, 2).join(" ")} failed (${r.status}): ${r.stderr}`);
    return r.stdout;
  }

  /** What the container wrote, both streams (podman logs gives its stderr on its own). */
  function logsOf(name: string): string {
    const r = spawnSync("podman", ["logs", name], {
      encoding: "utf8",
      env: { ...process.env, CONTAINERS_CONF: conf },
    });
    return `${r.stdout}${r.stderr}`;
  }

  /**
   * The machine's own Node, as a user's image would have it: the first `node` on PATH outside a
   * node_modules folder (the repository's pinned Node 22, there for the MCP conformance suite, runs
   * the tests themselves), else the one running this test.
   */
  function systemNode(): string {
    for (const dir of (process.env.PATH ?? "").split(path.delimiter)) {
      const candidate = path.join(dir, "node");
      if (dir !== "" && !dir.includes("node_modules") && fs.existsSync(candidate)) return candidate;
    }
    return process.execPath;
  }

  /** Makes {@link base}, when this machine has not yet: Node and the libraries it links, no shell. */
  function baseImage(): void {
    if (
      spawnSync("podman", ["image", "exists", base], { env: { ...process.env, CONTAINERS_CONF: conf } })
        .status === 0
    )
      return;
    const rootfs = path.join(root, "rootfs");
    const node = fs.realpathSync(systemNode());
    const files = [node, ...(execFileSync("ldd", [node], { encoding: "utf8" }).match(/\/\S+/g) ?? [])];
    for (const f of files) {
      const to = path.join(rootfs, f === node ? "/usr/bin/node" : f);
      fs.mkdirSync(path.dirname(to), { recursive: true });
      fs.copyFileSync(fs.realpathSync(f), to);
      fs.chmodSync(to, 0o755);
    }
    fs.mkdirSync(path.join(rootfs, "tmp"), { mode: 0o1777 });
    const tar = path.join(root, "rootfs.tar");
    execFileSync("tar", ["-C", rootfs, "-cf", tar, "."]);
    podman("import", "--change", "ENV PATH=/usr/bin", tar, base);
    fs.rmSync(rootfs, { recursive: true, force: true });
    fs.rmSync(tar, { force: true });
  }

  /** Starts a container of {@link image} on `port`, with the token file and `data` as its volume. */
  function start(name: string, port: number, data: string): void {
    names.push(name);
    podman(
      "run",
      "-d",
      "--name",
      name,
      "--network",
      "host",
      "-e",
      `KUMIKI_SERVE_PORT=${port}`,
      "-e",
      "KUMIKI_SERVE_HOST=127.0.0.1",
      "-e",
      "KUMIKI_SERVE_TOKEN_FILE=/etc/kumiki/tokens.json",
      "-v",
      `${path.join(root, "tokens.json")}:/etc/kumiki/tokens.json:ro`,
      "-v",
      `${data}:/var/lib/kumiki`,
      image,
    );
  }

  /** /health's answer once the server answers (at most 30 s), or the container's logs. */
  async function healthy(name: string, port: number): Promise<Record<string, unknown>> {
    for (let i = 0; i < 120; i++) {
      const r = await fetch(`http://127.0.0.1:${port}/health`).catch(() => undefined);
      if (r?.ok) return (await r.json()) as Record<string, unknown>;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    throw new Error(`no /health within 30 s: ${logsOf(name)}`);
  }

  beforeAll(() => {
    root = tempDir("container");
    const version = execFileSync(systemNode(), ["--version"], { encoding: "utf8" }).trim().slice(1);
    base = `localhost/kumiki-test-node:${version}`;
    conf = path.join(root, "containers.conf");
    fs.writeFileSync(conf, '[containers]\ndefault_ulimits = []\n[engine]\ncgroup_manager = "cgroupfs"\n');
    fs.writeFileSync(
      path.join(root, "tokens.json"),
      JSON.stringify({ format: 1, tokens: [{ name: "ops", token: TOKEN, graphs: { "*": "write" } }] }),
    );
    baseImage();
    const context = path.join(root, "context");
    execFileSync(
      process.execPath,
      [path.join(repoRoot, "scripts", "container-context.mjs"), context, "--offline"],
      {
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    podman(
      "build",
      "--format",
      "docker",
      "-f",
      path.join(repoRoot, "Containerfile"),
      "--build-arg",
      `NODE_IMAGE=${base}`,
      "-t",
      image,
      context,
    );
  }, 300_000);

  afterAll(() => {
    for (const n of names)
      spawnSync("podman", ["rm", "-f", n], { env: { ...process.env, CONTAINERS_CONF: conf } });
    spawnSync("podman", ["rmi", "-f", image], { env: { ...process.env, CONTAINERS_CONF: conf } });
    // The data volume's files belong to the container's user: removed as root, as the test runs.
    cleanup(root);
  });

  it("serves a workspace's sync, health and metrics; drains on SIGTERM; its volume outlives it", async () => {
    const data = path.join(root, "data");
    fs.mkdirSync(data);
    // The image runs as 1000:1000 (as node's official image's `node` user): the volume must be its.
    fs.chownSync(data, 1000, 1000);
    const port = await freePort();
    const first = `kumiki-serve-test-${process.pid}-a`;
    start(first, port, data);
    const health = await healthy(first, port);
    expect(health).toMatchObject({ ok: true, service: "kumiki-sync-server", auth: "tokens" });
    // The image's own health check, run by hand: podman runs it on a systemd timer, which this
    // sandbox has not (it says so on stderr and runs the container all the same).
    podman("healthcheck", "run", first);

    const ws = path.join(root, "ws");
    const opened = await openWorkspaceStore(ws, { author: "agent:ops", create: true });
    if (!opened.ok) throw new Error(opened.error.message);
    expect((await opened.value.store.add({ layer: "slot", name: "n", body: ": Int = 41" })).ok).toBe(true);
    const graph = opened.value.workspace.log.url;
    await opened.value.close();
    const url = `ws://127.0.0.1:${port}`;
    const synced = await syncWorkspace(ws, { url, token: TOKEN, timeoutMs: 30_000 });
    expect(synced.ok, synced.ok ? "" : synced.error.message).toBe(true);
    expect(synced.ok && synced.value.sent).toBe(1);
    // Refused without the token: the server in the container checks tokens from the mounted file.
    const refused = await syncWorkspace(ws, { url, timeoutMs: 10_000 });
    expect(refused.ok ? "synced" : refused.error.code).toBe("unauthorized");

    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/^kumiki_ops_accepted_total(\{[^}]*\})? 1$/m);
    expect(metrics).toMatch(/^kumiki_refusals_total\{[^}]*reason="unauthorized"[^}]*\} [1-9]/m);

    // SIGTERM: the server drains, flushes every graph to the volume and exits 0.
    podman("stop", "-t", "20", first);
    expect(podman("inspect", first, "--format", "{{.State.ExitCode}}").trim()).toBe("0");
    const logs = logsOf(first);
    expect(logs).toContain("stopped on SIGTERM");
    // The log is JSON lines (KUMIKI_SERVE_LOG_FORMAT=json in the image): the connection's events.
    const events = logs
      .split("\n")
      .filter((l) => l.startsWith("{"))
      .map((l) => JSON.parse(l) as { event?: string });
    expect(events.some((e) => e.event === "connected")).toBe(true);

    // A new container on the same volume serves what the first stored.
    const second = `kumiki-serve-test-${process.pid}-b`;
    start(second, port, data);
    await healthy(second, port);
    const clone = path.join(root, "clone");
    const cloned = await cloneWorkspace(`${url}/${graph}`, clone, { token: TOKEN, timeoutMs: 30_000 });
    expect(cloned.ok, cloned.ok ? "" : cloned.error.message).toBe(true);
    const reopened = await openWorkspaceStore(clone, { author: "agent:ops" });
    if (!reopened.ok) throw new Error(reopened.error.message);
    const view = reopened.value.store.view("slot.n");
    await reopened.value.close();
    expect(view.ok && view.value.text).toBe("slot n : Int = 41\n");
    podman("stop", "-t", "20", second);
  }, 300_000);
});
