/**
 * What a verb is (`Command`, or a `LazyCommand` loaded on use) and what it gets: the streams, the
 * global options, the workspace on demand.
 */
import type {
  CapabilityManifest,
  CheckCache,
  KeptChecks,
  ListEntry,
  RefsResult,
  Store,
  StoreStatus,
  ViewResult,
} from "@kumiki-graph/core";
import type { OptionSpecs, OptionValues } from "./args.js";
import { failure } from "./errors.js";
import type { CliIo } from "./io.js";

/** What every verb gets: the streams, the global options, and the workspace on demand. */
export interface CommandContext {
  readonly io: Required<CliIo>;
  /** The verb as typed, e.g. `patch apply`. */
  readonly verb: string;
  readonly positionals: readonly string[];
  readonly options: OptionValues;
  /** `--json` was given: the result is printed as JSON. */
  readonly json: boolean;
  /** Colour is allowed (stdout is a TTY and NO_COLOR is unset). */
  readonly color: boolean;
  /** The author ops are issued as (`--author`, else KUMIKI_AUTHOR, else user:$USER). */
  readonly author: string;
  /** `--task`, when given. */
  readonly task: string | undefined;
  /** `--store`, resolved against cwd, when given. */
  readonly storeDir: string | undefined;
  /**
   * An option as the user gave it, for an error about its value: `--port`, or the environment
   * variable it was read from (`KUMIKI_SERVE_PORT`, see {@link Command.environment}).
   */
  optionName(name: string): string;
  /**
   * Opens the workspace's store (found from `--store` or upward from cwd). Opened once per
   * invocation; `main` closes it after the verb returns, so writes are durable before exit.
   */
  openStore(): Promise<Store>;
  /**
   * The store for a verb that only reads: served from the workspace's op-log.jsonl when the storage
   * shows it current (storage-automerge's read path), without loading Automerge; else the full
   * store. Never write through it.
   */
  openReadStore(): Promise<Store>;
  /**
   * Where `check` keeps its results for the state {@link openReadStore} read
   * (`.kumiki/cache/check.json`): only when that store was served from the workspace's files and
   * `KUMIKI_CHECK_CACHE` is not `off`; undefined for a store held open (a daemon's is checked
   * incrementally in memory).
   */
  checkCache(): Promise<CheckCache | undefined>;
  /**
   * Where checks are kept as state a checker goes on from (`.kumiki/cache/live-check.jsonl`), under
   * the same conditions as {@link checkCache}: a check after another process's write re-checks
   * from the state the write kept.
   */
  keptChecks(): Promise<KeptChecks | undefined>;
  /**
   * `view` of a name, a pattern or a `def_…` (with `withDeps`, and what they reference) from the
   * table of every definition kept for the state {@link openReadStore} read
   * (`.kumiki/cache/definitions.jsonl`, core's `viewFromTable`): only when that store was served
   * from the workspace's files and `KUMIKI_VIEW_CACHE` is not `off`.
   * Undefined otherwise, and for whatever the table does not answer: ask the store then.
   */
  keptView(selector: string, withDeps?: boolean): Promise<ViewResult | undefined>;
  /** `list` of `layer` (or of all) from that table (core's `listFromTable`), under the same conditions. */
  keptList(layer: string | undefined): Promise<ListEntry[] | undefined>;
  /** `refs` (`view --refs`) of a name, a pattern or a `def_…` from that table (core's `refsFromTable`), under the same conditions. */
  keptRefs(selector: string): Promise<RefsResult | undefined>;
  /** `status` from that table's trailer (core's `statusFromTable`, with {@link author}), under the same conditions. */
  keptStatus(): Promise<StoreStatus | undefined>;
  /** Keeps that table for the state {@link openReadStore} read (after a view, list, refs or status it did not answer), under the same conditions. */
  keepDefinitions(): Promise<void>;
  /** Every op the workspace holds, in the wire format (what `patch export` writes). */
  heldOps(): Promise<readonly unknown[]>;
  /** The next line of standard input (without its newline), or undefined at its end. */
  readLine(): Promise<string | undefined>;
  /**
   * The workspace's capability manifest (`kumiki.caps.json` beside `.kumiki/`), when it has one:
   * custom capabilities `app.caps` may name. The write gate, check and fix all use it.
   */
  capabilities(): Promise<CapabilityManifest | undefined>;
  /** Reads a file argument, `-` meaning standard input, relative to cwd. */
  readInput(file: string): Promise<string>;
  /** Shows progress on stderr when it is a TTY and --json is off; silent otherwise. */
  progress(message: string): void;
}

/** What a verb returns; `main` prints it (JSON with --json, else text) and exits with `exit`. */
export interface CommandResult {
  /** 0 done; 1 done and the operation failed (e.g. `check` found errors). Default 0. */
  readonly exit?: 0 | 1;
  /** The JSON printed with --json (docs/cli.md documents each verb's shape). */
  readonly json: unknown;
  /** The text printed without --json (a trailing newline is added when missing; "" prints nothing). */
  readonly text: string;
  /** Print `text` byte for byte, with no newline added (`export` to stdout). */
  readonly raw?: boolean;
  /** Extra lines for stderr (warnings), printed in both modes. */
  readonly warnings?: readonly string[];
}

/** One verb. Names may be two words (`patch apply`, `config conflict-policy`, `mcp serve`). */
export interface Command {
  readonly name: string;
  /** One line for `kumiki --help`. */
  readonly summary: string;
  /** Usage lines after `kumiki `, e.g. `view <selector> [--with-deps]`. */
  readonly usage: readonly string[];
  /** Worked examples for `kumiki <verb> --help`. */
  readonly examples: readonly string[];
  readonly options: OptionSpecs;
  /** How many positionals it takes; outside the range is a usage error (exit 2). */
  readonly positionals: { readonly min: number; readonly max: number; readonly names: string };
  /**
   * The prefix of the environment variables this verb's options are also read from (`KUMIKI_SERVE_`:
   * `--token-file` from `KUMIKI_SERVE_TOKEN_FILE`); the command line wins (args.ts withEnvironment).
   */
  readonly environment?: string;
  run(ctx: CommandContext): Promise<CommandResult>;
}

/**
 * A verb registered by name whose module is imported only when it runs (or when `kumiki --help`
 * lists every verb): for verbs whose modules load heavy packages (the MCP SDK, the sync server), so
 * that `kumiki view` never loads them.
 */
export interface LazyCommand {
  readonly name: string;
  /** The verb's summary, as `kumiki --help` lists it without loading the verb (held equal to the loaded one's). */
  readonly summary: string;
  load(): Promise<Command>;
}

/**
 * The CLI's optional parts: packages installed with `@kumiki-graph/cli` only when the user asks
 * (optional peer dependencies), and what each brings.
 */
export const OPTIONAL_PARTS = {
  "@kumiki-graph/sync-server": "the sync server and client",
} as const;

/** One of {@link OPTIONAL_PARTS}. */
export type OptionalPart = keyof typeof OPTIONAL_PARTS;

/**
 * Loads a module that imports an optional part; when the part is not installed, a failure that
 * says so and how to install it (exit 1), instead of Node's ERR_MODULE_NOT_FOUND.
 */
export async function withOptionalPart<T>(
  part: OptionalPart,
  verb: string,
  load: () => Promise<T>,
): Promise<T> {
  try {
    return await load();
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === "ERR_MODULE_NOT_FOUND" && err.message.includes(`'${part}'`)) {
      throw failure(
        "optional-part-missing",
        `kumiki ${verb} needs ${part} (${OPTIONAL_PARTS[part]}), an optional part of @kumiki-graph/cli that is not installed: npm install ${part} beside @kumiki-graph/cli`,
        { package: part },
      );
    }
    throw e;
  }
}

/**
 * A {@link LazyCommand}: `lazy("mcp serve", "serve …", async () => (await import("./mcp.js")).mcpServe)`.
 * The summary is repeated here so that `kumiki --help` loads no heavy package; loading the verb
 * checks that it is the same. `part`: the optional package the verb's module imports
 * ({@link withOptionalPart}).
 */
export function lazy(
  name: string,
  summary: string,
  load: () => Promise<Command>,
  part?: OptionalPart,
): LazyCommand {
  let loaded: Promise<Command> | undefined;
  return {
    name,
    summary,
    load: () => {
      loaded ??= (part === undefined ? load() : withOptionalPart(part, name, load)).then((c) => {
        if (c.name !== name) throw new Error(`lazy verb ${name} loaded a command named ${c.name}`);
        if (c.summary !== summary)
          throw new Error(`lazy verb ${name}: its summary in commands/index.ts differs from the command's`);
        return c;
      });
      return loaded;
    },
  };
}

/** The command itself, loading it when it is lazy. */
export function resolveCommand(c: Command | LazyCommand): Promise<Command> {
  return "run" in c ? Promise.resolve(c) : c.load();
}
