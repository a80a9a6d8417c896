/**
 * The entry of every call: finds the verb, parses its arguments, runs it, prints its result and
 * turns a failure into the exit codes of §9.2.5.
 */

import { remedyStepsOf } from "@kumiki-graph/core/rejection";
import { GLOBAL_OPTIONS, parseCommandArgs, withEnvironment } from "./args.js";
import { type Command, type CommandResult, type LazyCommand, resolveCommand } from "./command.js";
import { COMMANDS } from "./commands/index.js";
import { checkAuthor, createContext, SnapshotUnreadable, type StoreProvider } from "./context.js";
import { CliError, usageError } from "./errors.js";
import { mainHelp, verbHelp } from "./help.js";
import { printable } from "./input-text.js";
import { type CliIo, processIo } from "./io.js";
import { withCommands } from "./remedy.js";
import { CLI_VERSION } from "./version.js";

export type { CliIo } from "./io.js";
export { CLI_VERSION } from "./version.js";

/** Lines of `stdin`, one a call: how `readLine` works when the io gives none. */
function linesOf(stdin: () => Promise<string>): () => Promise<string | undefined> {
  let lines: Promise<string[]> | undefined;
  return async () => {
    lines ??= stdin().then((t) => (t === "" ? [] : t.replace(/\r?\n$/, "").split(/\r?\n/)));
    return (await lines).shift();
  };
}

function withDefaults(io: CliIo): Required<CliIo> {
  const stdin = io.stdin ?? (async () => "");
  return {
    stdout: io.stdout,
    stderr: io.stderr,
    stdin,
    readLine: io.readLine ?? linesOf(stdin),
    env: io.env ?? {},
    cwd: io.cwd ?? process.cwd(),
    isTTY: io.isTTY ?? false,
  };
}

/** Splits leading global options (`kumiki --store d view x`) from the verb and its arguments. */
function splitVerb(argv: readonly string[]): {
  globals: string[];
  verb: Command | LazyCommand | undefined;
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
  else if (result.raw === true) io.stdout(result.text);
  else if (result.text !== "") io.stdout(result.text.endsWith("\n") ? result.text : `${result.text}\n`);
}

/**
 * Node reads the command line as UTF-8 and puts U+FFFD where a byte is not (a Latin-1 é from a
 * shell in another encoding): such an argument would be stored as U+FFFD with exit 0. Refused
 * (said on stderr), as a file with such bytes is (input-text.ts).
 */
function notUtf8(argv: readonly string[], io: Required<CliIo>): boolean {
  const replaced = argv.findIndex((a) => a.includes("\uFFFD"));
  if (replaced >= 0) {
    const shown = argv[replaced]!.length > 60 ? `${argv[replaced]!.slice(0, 57)}...` : argv[replaced]!;
    io.stderr(
      `kumiki: argument ${replaced + 1} (${JSON.stringify(shown)}) holds U+FFFD where the command line had bytes that are not UTF-8 (a Latin-1 é?): a Kumiki text is UTF-8; give the argument in UTF-8 (or the text in a UTF-8 file, e.g. --body-file F); nothing was done\n`,
    );
    return true;
  }
  return false;
}

/**
 * A command line with no verb the CLI knows: help (of all, or of a verb), the version, a verb
 * family's sub-verbs, or the refusal of an unknown verb or option. Returns the exit code.
 */
async function withoutVerb(
  globals: readonly string[],
  word: string | undefined,
  rest: readonly string[],
  io: Required<CliIo>,
): Promise<number> {
  if (word === undefined && globals.length > 0) {
    // `kumiki --store status`: the option took the verb as its value, and no verb is left.
    io.stderr(
      `kumiki: no verb after ${globals.join(" ")} (an option that takes a value took the next word: give it a value, then the verb, e.g. kumiki --store DIR status)\n`,
    );
    return 2;
  }
  if (word === undefined || word === "-h" || word === "--help" || word === "help") {
    const topic = word === "help" ? COMMANDS.find((c) => c.name === rest.join(" ")) : undefined;
    io.stdout(topic === undefined ? mainHelp(COMMANDS) : verbHelp(await resolveCommand(topic)));
    return 0;
  }
  if (word === "-V" || word === "--version") {
    io.stdout(`kumiki ${CLI_VERSION}\n`);
    return 0;
  }
  const family = COMMANDS.filter((c) => c.name.startsWith(`${word} `)).map((c) =>
    c.name.slice(word.length + 1),
  );
  if (family.length > 0) {
    const next = rest[0];
    if (next === "--help" || next === "-h") {
      // `kumiki remote --help`: the family's sub-verbs, each with its summary and usage.
      const members = await Promise.all(
        COMMANDS.filter((c) => c.name.startsWith(`${word} `)).map(resolveCommand),
      );
      const lines = [`kumiki ${word} — one of ${family.join(", ")}:`, ""];
      for (const m of members) {
        lines.push(`  kumiki ${m.name}: ${m.summary}`);
        for (const u of m.usage) lines.push(`      kumiki ${u}`);
      }
      lines.push("", `kumiki ${word} ${family[0]} --help shows one sub-verb's options and examples.`);
      io.stdout(`${lines.join("\n")}\n`);
      return 0;
    }
    io.stderr(
      `kumiki ${word}: ${next === undefined ? "give one of" : `unknown sub-verb '${next}': one of`} ${family.join(", ")} (kumiki ${word} ${family[0]} --help)\n`,
    );
    return 2;
  }
  const what = word.startsWith("-") ? `unknown option '${word}'` : `unknown verb '${word}'`;
  io.stderr(`kumiki: ${what}: run 'kumiki --help' for the verbs there are\n`);
  return 2;
}

/** Refuses a call with fewer or more positional arguments than `command` takes (a usage error). */
function checkArity(command: Command, n: number): void {
  const name = command.name;
  if (n < command.positionals.min || n > command.positionals.max) {
    const want =
      command.positionals.min === command.positionals.max
        ? `${command.positionals.min}`
        : command.positionals.max === Number.POSITIVE_INFINITY
          ? `at least ${command.positionals.min}`
          : `${command.positionals.min} to ${command.positionals.max}`;
    throw usageError(
      `kumiki ${name}: expected ${want} argument${want === "1" ? "" : "s"} (${command.positionals.names}), got ${n}: run 'kumiki ${name} --help'`,
    );
  }
}

/**
 * Runs one CLI invocation and returns its exit code (§9.2.5: 0 done, 1 done and the operation
 * failed, 2 wrong argument shape). The one place that prints results and errors; never calls
 * process.exit, so tests call it in-process.
 */
export async function main(
  argv: readonly string[],
  cliIo: CliIo = processIo,
  options: { readonly stores?: StoreProvider } = {},
): Promise<number> {
  const io = withDefaults(cliIo);
  if (notUtf8(argv, io)) return 2;
  const { globals, verb, word, rest } = splitVerb(argv);
  if (verb === undefined) return withoutVerb(globals, word, rest, io);
  const jsonWanted = argv.includes("--json");
  let close: (() => Promise<void>) | undefined;
  const name = verb.name;
  try {
    const command = await resolveCommand(verb);
    const given = parseCommandArgs(name, [...globals, ...rest], command.options);
    const parsed =
      command.environment === undefined || given.options.help === true
        ? { ...given, sources: new Map<string, string>() }
        : withEnvironment(name, given, command.options, command.environment, io.env);
    if (parsed.options.help === true) {
      io.stdout(verbHelp(command));
      return 0;
    }
    checkArity(command, parsed.positionals.length);
    const open = (from: Required<CliIo>) =>
      createContext(from, name, parsed.positionals, parsed.options, options.stores, parsed.sources);
    let opened = open(io);
    close = opened.close;
    await checkAuthor(opened.ctx.author);
    let result: CommandResult;
    try {
      result = await command.run(opened.ctx);
    } catch (e) {
      if (!(e instanceof SnapshotUnreadable)) throw e;
      await opened.close();
      opened = open({ ...io, env: { ...io.env, KUMIKI_READ_SNAPSHOT: "off" } });
      close = opened.close;
      result = await command.run(opened.ctx);
    }
    // Closing flushes the store: a write is reported done only once it is durable.
    await opened.close();
    close = undefined;
    print(io, opened.ctx.json, result);
    return result.exit ?? 0;
  } catch (e) {
    if (close !== undefined) await close().catch(() => undefined);
    if (e instanceof CliError) {
      const said = withCommands(e.message, remedyStepsOf(e.details));
      const line = printable(said.startsWith("kumiki") ? said : `kumiki ${name}: ${said}`);
      io.stderr(`${line}\n`);
      if (jsonWanted) {
        io.stdout(
          `${JSON.stringify({ error: { code: e.code, message: e.message, ...(e.details === undefined ? {} : { details: e.details }) } })}\n`,
        );
      }
      return e.exit;
    }
    // A bug, not an expected failure: say so plainly, with the stack for the report.
    io.stderr(`kumiki ${name}: internal error: ${(e as Error).stack ?? String(e)}\n`);
    return 1;
  }
}
