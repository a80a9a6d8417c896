/**
 * An inter-process lock file: created with O_EXCL, holding the owner's pid (and, on Linux, the
 * owner's start time, so a recycled pid is not mistaken for the owner), broken when its owner is gone.
 * One FileLock instance is shared by its callers: nested and concurrent `run` calls on it ride on one
 * acquisition. Two instances on the same path exclude each other, even in one process.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs";

/** Options of {@link FileLock}. */
export interface FileLockOptions {
  /** How long `acquire` waits for a live owner before giving up (ms). Default 60 000. */
  readonly timeoutMs?: number;
  /** A lock whose content cannot be read (owner died between create and write) is stale after this (ms). Default 2 000. */
  readonly unreadableStaleMs?: number;
}

/** Thrown by {@link FileLock.acquire} when a live process holds the lock for longer than the timeout. */
export class LockTimeoutError extends Error {
  readonly code = "lock-timeout";
  constructor(
    readonly path: string,
    readonly holder: string,
  ) {
    super(`timed out waiting for the lock ${path} (held by ${holder || "an unknown process"})`);
  }
}

interface Holder {
  readonly pid: number;
  readonly start: string;
  readonly token: string;
}

/**
 * Start time of a live process in clock ticks since boot (Linux); "" where /proc cannot tell;
 * undefined when the process is gone (no entry, or a zombie waiting to be reaped).
 */
function processStart(pid: number): string | undefined {
  let stat: string;
  try {
    stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT" && fs.existsSync("/proc/self/stat")) return undefined;
    return "";
  }
  // The command name (field 2) may contain spaces and parentheses: fields resume after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return undefined;
  return fields[19] ?? "";
}

function isAlive(holder: Holder): boolean {
  try {
    process.kill(holder.pid, 0);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ESRCH") return false;
  }
  const start = processStart(holder.pid);
  if (start === undefined) return false;
  return holder.start === "" || start === "" || start === holder.start;
}

function parseHolder(text: string): Holder | undefined {
  const m = /^(\d+) (\d*) ([0-9a-f]+)\n$/.exec(text);
  if (!m) return undefined;
  return { pid: Number(m[1]), start: m[2] ?? "", token: m[3] ?? "" };
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** A lock file at `path`, exclusive between processes (and instances), shared by the users of one instance. */
export class FileLock {
  private readonly token = randomBytes(8).toString("hex");
  private readonly content: string;
  private holds = 0;
  /** Our lock file, open while we hold it (release checks it is still the one at `path`). */
  private fd: number | undefined;
  private acquiring: Promise<void> | undefined;
  private readonly timeoutMs: number;
  private readonly unreadableStaleMs: number;

  constructor(
    readonly path: string,
    options: FileLockOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.unreadableStaleMs = options.unreadableStaleMs ?? 2_000;
    this.content = `${process.pid} ${processStart(process.pid) ?? ""} ${this.token}\n`;
  }

  /** True while this process holds the lock. */
  get held(): boolean {
    return this.holds > 0 && this.acquiring === undefined;
  }

  /** Runs `fn` while holding the lock (acquiring it unless this process already holds it). */
  async run<R>(fn: () => R | Promise<R>): Promise<R> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  /** Takes one hold on the lock; the file is created by the first hold. */
  async acquire(): Promise<void> {
    this.holds++;
    try {
      if (this.holds === 1) {
        this.acquiring = this.take();
        try {
          await this.acquiring;
        } finally {
          this.acquiring = undefined;
        }
      } else if (this.acquiring) {
        await this.acquiring;
      }
    } catch (e) {
      this.holds--;
      throw e;
    }
  }

  /** Drops one hold; the last one removes the file (only if it is still ours). */
  release(): void {
    if (this.holds === 0) return;
    this.holds--;
    if (this.holds > 0) return;
    const fd = this.fd;
    this.fd = undefined;
    if (fd === undefined) return;
    try {
      if (fs.statSync(this.path).ino === fs.fstatSync(fd).ino) fs.unlinkSync(this.path);
    } catch {
      // Already gone (broken as stale by another process): nothing of ours to remove.
    } finally {
      fs.closeSync(fd);
    }
  }

  private async take(): Promise<void> {
    const deadline = Date.now() + this.timeoutMs;
    let wait = 1;
    let lastHolder = "";
    for (;;) {
      if (this.tryCreate()) return;
      const seen = this.inspect();
      if (seen.stale) {
        this.breakStale(seen.text);
        continue;
      }
      lastHolder = seen.text.trim();
      if (Date.now() > deadline) throw new LockTimeoutError(this.path, lastHolder);
      await sleep(wait);
      wait = Math.min(wait * 2, 25);
    }
  }

  private tryCreate(): boolean {
    let fd: number;
    try {
      fd = fs.openSync(this.path, "wx");
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw e;
    }
    try {
      fs.writeSync(fd, this.content);
    } catch (e) {
      fs.closeSync(fd);
      fs.rmSync(this.path, { force: true });
      throw e;
    }
    this.fd = fd;
    return true;
  }

  private inspect(): { stale: boolean; text: string } {
    let text: string;
    let mtime: number;
    try {
      text = fs.readFileSync(this.path, "utf8");
      mtime = fs.statSync(this.path).mtimeMs;
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return { stale: false, text: "" };
      throw e;
    }
    const holder = parseHolder(text);
    if (!holder) return { stale: Date.now() - mtime > this.unreadableStaleMs, text };
    return { stale: !isAlive(holder), text };
  }

  /**
   * Removes a lock whose owner is gone. The file is first renamed to a name of our own, so that of
   * two processes breaking the same stale lock only one succeeds; if what we moved is not the stale
   * lock we inspected (a live owner took it in between), it is put back.
   */
  private breakStale(staleText: string): void {
    const aside = `${this.path}.stale-${this.token}`;
    try {
      fs.renameSync(this.path, aside);
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") return;
      throw e;
    }
    let moved = "";
    try {
      moved = fs.readFileSync(aside, "utf8");
    } catch {
      // Unreadable: treat as the stale lock.
      moved = staleText;
    }
    if (moved !== staleText) {
      try {
        fs.linkSync(aside, this.path);
      } catch {
        // A new lock exists already; the owner we displaced finds its file gone at release.
      }
    }
    fs.rmSync(aside, { force: true });
  }
}
