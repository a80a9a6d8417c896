import { readFileSync } from "node:fs";
import { GLOBAL_OPTIONS, parseCommandArgs } from "./args.js";
import type { Command, CommandResult } from "./command.js";
import { COMMANDS } from "./commands/index.js";
import { checkAuthor, createContext } from "./context.js";
import { CliError, usageError } from "./errors.js";
import { mainHelp, verbHelp } from "./help.js";
import { type CliIo, processIo } from "./io.js";

export type { CliIo } from "./io.js";

/** The package version, read from this package's own package.json. */
export const CLI_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

function withDefaults(io: CliIo): Required<CliIo> {
  return {
    stdout: io.stdout,
    stderr: io.stderr,
    stdin: io.stdin ?? (async () => ""),
    env: io.env ?? {},
    cwd: io.cwd ?? process.cwd(),
    isTTY: io.isTTY ?? false,
  };
}

/** Splits leading global options (`kumiki --store d view x`) from the verb and its arguments. */
function splitVerb(argv: readonly string[]): {
  globals: string[];
  verb: Command | undefined;
  word: string | undefined;
  rest: string[];
} {
  const globals: string[] = [];
  let i = 0;
  while (i < argv.length) {
    const a = argv[i] as string;
    const name = a.startsWith("--") ? a.slice(2).split("=")[0] : undefined;
    const spec = name === undefined ? undefined : GLOBAL_OPTIONS[name];
    if (spec === undefined || name === "help") break;
    globals.push(a);
    if (spec.type === "string" && !a.includes("=") && i + 1 < argv.length) globals.push(argv[++i] as string);
    i++;
  }
  const word = argv[i];
  const next = argv[i + 1];
  const two = next === undefined ? undefined : COMMANDS.find((c) => c.name === `${word} ${next}`);
  if (two !== undefined) return { globals, verb: two, word: two.name, rest: argv.slice(i + 2) };
  const one = COMMANDS.find((c) => c.name === word);
  return { globals, verb: one, word, rest: argv.slice(i + 1) };
}

function print(io: Required<CliIo>, json: boolean, result: CommandResult): void {
  for (const w of result.warnings ?? []) io.stderr(`warning: ${w}\n`);
  if (json) io.stdout(`${JSON.stringify(result.json)}\n`);
  else if (result.text !== "") io.stdout(result.text.endsWith("\n") ? result.text : `${result.text}\n`);
}

/**
 * Runs one CLI invocation and returns its exit code (§9.2.5: 0 done, 1 done and the operation
 * failed, 2 wrong argument shape). The one place that prints results and errors; never calls
 * process.exit, so tests call it in-process.
 */
export async function main(argv: readonly string[], cliIo: CliIo = processIo): Promise<number> {
  const io = withDefaults(cliIo);
  const { globals, verb, word, rest } = splitVerb(argv);
  if (word === undefined || word === "-h" || word === "--help" || word === "help") {
    const topic = word === "help" ? COMMANDS.find((c) => c.name === rest.join(" ")) : undefined;
    io.stdout(topic === undefined ? mainHelp(COMMANDS) : verbHelp(topic));
    return 0;
  }
  if (word === "-V" || word === "--version") {
    io.stdout(`kumiki ${CLI_VERSION}\n`);
    return 0;
  }
  if (verb === undefined) {
    const what = word.startsWith("-") ? `unknown option '${word}'` : `unknown verb '${word}'`;
    io.stderr(`kumiki: ${what}: run 'kumiki --help' for the verbs there are\n`);
    return 2;
  }
  const jsonWanted = argv.includes("--json");
  let close: (() => Promise<void>) | undefined;
  try {
    const parsed = parseCommandArgs(verb.name, [...globals, ...rest], verb.options);
    if (parsed.options.help === true) {
      io.stdout(verbHelp(verb));
      return 0;
    }
    const n = parsed.positionals.length;
    if (n < verb.positionals.min || n > verb.positionals.max) {
      const want =
        verb.positionals.min === verb.positionals.max
          ? `${verb.positionals.min}`
          : verb.positionals.max === Number.POSITIVE_INFINITY
            ? `at least ${verb.positionals.min}`
            : `${verb.positionals.min} to ${verb.positionals.max}`;
      throw usageError(
        `kumiki ${verb.name}: expected ${want} argument${want === "1" ? "" : "s"} (${verb.positionals.names}), got ${n}: run 'kumiki ${verb.name} --help'`,
      );
    }
    const opened = createContext(io, verb.name, parsed.positionals, parsed.options);
    close = opened.close;
    checkAuthor(opened.ctx.author);
    const result = await verb.run(opened.ctx);
    // Closing flushes the store: a write is reported done only once it is durable.
    await opened.close();
    close = undefined;
    print(io, opened.ctx.json, result);
    return result.exit ?? 0;
  } catch (e) {
    if (close !== undefined) await close().catch(() => undefined);
    if (e instanceof CliError) {
      const line = e.message.startsWith("kumiki") ? e.message : `kumiki ${verb.name}: ${e.message}`;
      io.stderr(`${line}\n`);
      if (jsonWanted) {
        io.stdout(
          `${JSON.stringify({ error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) } })}\n`,
        );
      }
      return e.exit;
    }
    // A bug, not an expected failure: say so plainly, with the stack for the report.
    io.stderr(`kumiki ${verb.name}: internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
