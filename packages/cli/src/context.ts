import { readFile } from "node:fs/promises";
import path from "node:path";
import { isAuthorId, openStore, openWorkspace, type Store } from "@kumiki-graph/core";
import type { OptionValues } from "./args.js";
import { stringOption } from "./args.js";
import type { CommandContext } from "./command.js";
import { failure, fromRejection, usageError } from "./errors.js";
import type { CliIo } from "./io.js";

/** The context of one invocation, and the cleanup `main` runs after the verb. */
export interface OpenContext {
  readonly ctx: CommandContext;
  close(): Promise<void>;
}

/** The default author: KUMIKI_AUTHOR, else user:$USER, else user:anonymous. */
export function defaultAuthor(env: Readonly<Record<string, string | undefined>>): string {
  const fromEnv = env.KUMIKI_AUTHOR;
  if (fromEnv !== undefined && fromEnv !== "") return fromEnv;
  const user = (env.USER ?? env.USERNAME ?? "anonymous").replace(/[^A-Za-z0-9._:@/+-]/g, "_");
  return `user:${user === "" ? "anonymous" : user}`;
}

/** Builds the context a verb runs in. */
export function createContext(
  io: Required<CliIo>,
  verb: string,
  positionals: readonly string[],
  options: OptionValues,
): OpenContext {
  const json = options.json === true;
  const storeOption = stringOption(options, "store");
  const storeDir = storeOption === undefined ? undefined : path.resolve(io.cwd, storeOption);
  const author = stringOption(options, "author") ?? defaultAuthor(io.env);
  const noColor = io.env.NO_COLOR !== undefined && io.env.NO_COLOR !== "";
  let opened: Promise<Store> | undefined;
  const ctx: CommandContext = {
    io,
    verb,
    positionals,
    options,
    json,
    color: !noColor && io.isTTY,
    author,
    task: stringOption(options, "task"),
    storeDir,
    openStore() {
      opened ??= (async () => {
        const ws = await openWorkspace(storeDir ?? io.cwd);
        if (!ws.ok) throw fromRejection(ws.error);
        const store = openStore({ log: ws.value.log, author });
        if (!store.ok) {
          await ws.value.log.close();
          throw fromRejection(store.error);
        }
        return store.value;
      })();
      return opened;
    },
    async readInput(file) {
      if (file === "-") return io.stdin();
      const p = path.resolve(io.cwd, file);
      try {
        return await readFile(p, "utf8");
      } catch (e) {
        const err = e as NodeJS.ErrnoException;
        if (err.code === "ENOENT") throw failure("file-not-found", `${file}: no such file`, { path: p });
        throw failure("file-unreadable", `${file}: cannot read (${err.code ?? err.message})`, { path: p });
      }
    },
    progress(message) {
      if (io.isTTY && !json) io.stderr(`\r\x1b[2K${message}`);
    },
  };
  return {
    ctx,
    async close() {
      if (opened === undefined) return;
      const store = await opened.catch(() => undefined);
      await store?.close();
    },
  };
}

/** A usage error when `author` is not a valid author id; checked before the store is read. */
export function checkAuthor(author: string): void {
  if (!isAuthorId(author)) {
    throw usageError(
      `invalid author ${JSON.stringify(author)}: letters, digits and . _ : @ / + - without spaces, at most 128 characters (e.g. agent:claude-1)`,
    );
  }
}
