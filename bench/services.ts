/**
 * The real services benches run against: the `kumiki` bin as a child process, and a schema of
 * the machine's PostgreSQL (`KUMIKI_TEST_POSTGRES` or postgres://postgres@127.0.0.1:5432/test)
 * made for one run and dropped after.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import pg from "pg";
import { repoRoot } from "./paths.js";

/** The `kumiki` bin. */
export const KUMIKI_BIN = path.join(repoRoot, "packages/cli/bin/kumiki.js");

/** A running bin, and what it printed that `startBin` waited for. */
export interface BinProcess {
  readonly child: ChildProcess;
  /** The first group of the line `startBin` waited for (the URL it listens on). */
  readonly line: string;
  /** SIGTERM, resolved once it exited. */
  stop(): Promise<void>;
}

/** The bin with `args`, once its stdout matches `re` (within 20 s). */
export async function startBin(args: readonly string[], re: RegExp): Promise<BinProcess> {
  const child = spawn(process.execPath, [KUMIKI_BIN, ...args], { stdio: ["ignore", "pipe", "pipe"] });
  const line = await new Promise<string>((resolve, reject) => {
    let out = "";
    const timer = setTimeout(() => reject(new Error(`no ${re} in: ${out}`)), 20_000);
    child.stdout!.on("data", (b: Buffer) => {
      out += b.toString();
      const m = re.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    child.stderr!.resume();
  });
  return {
    child,
    line,
    stop: () =>
      new Promise((resolve) => {
        child.once("exit", () => resolve());
        child.kill("SIGTERM");
      }),
  };
}

/** Runs `text` on the database; false when it cannot be reached. */
async function sql(url: string, text: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query(text);
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** A schema made for one run: `url` reaches it (undefined: no PostgreSQL here); `drop` removes it. */
export async function benchSchema(name: string): Promise<{ url: string | undefined; drop(): Promise<void> }> {
  const base = process.env.KUMIKI_TEST_POSTGRES ?? "postgres://postgres@127.0.0.1:5432/test";
  const schema = `${name}_${process.pid}`;
  const made = await sql(base, `CREATE SCHEMA IF NOT EXISTS "${schema}"`);
  return {
    url: made ? `${base}?options=${encodeURIComponent(`-c search_path=${schema}`)}` : undefined,
    drop: async () => {
      if (made) await sql(base, `DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
    },
  };
}
