/**
 * Argument parsing: a verb's declared options and positionals, and unknown options refused by
 * name.
 */
import { parseArgs } from "node:util";
import { usageError } from "./errors.js";

/** One option a command accepts. */
export interface OptionSpec {
  readonly type: "boolean" | "string";
  readonly short?: string;
  /** May be given more than once (values collected in order). */
  readonly multiple?: boolean;
  /** Placeholder shown in help, e.g. `DIR`. */
  readonly value?: string;
  readonly description: string;
}

/** Options by long name (without the dashes). */
export type OptionSpecs = Readonly<Record<string, OptionSpec>>;

/** Parsed options: booleans, strings, or string lists for `multiple`. */
export type OptionValues = Readonly<Record<string, boolean | string | readonly string[] | undefined>>;

/** What {@link parseCommandArgs} returns. */
export interface ParsedArgs {
  readonly positionals: readonly string[];
  readonly options: OptionValues;
}

/** Options every verb accepts. */
export const GLOBAL_OPTIONS: OptionSpecs = {
  store: {
    type: "string",
    value: "DIR",
    description: "the workspace (default: the nearest .kumiki/ above the current directory)",
  },
  json: { type: "boolean", description: "print the result as JSON (docs/cli.md gives each schema)" },
  author: {
    type: "string",
    value: "ID",
    description: "who issues the ops (default: $KUMIKI_AUTHOR, else user:$USER)",
  },
  task: {
    type: "string",
    value: "ID",
    description: "the task the ops belong to (undo --task reverts a whole task)",
  },
  help: { type: "boolean", short: "h", description: "show this verb's help" },
};

/**
 * Parses a verb's arguments strictly: an unknown option, a missing value or a value given to a
 * flag is a usage error (exit 2) that names the option, decided before any store is read.
 */
export function parseCommandArgs(verb: string, argv: readonly string[], specs: OptionSpecs): ParsedArgs {
  const all: Record<string, OptionSpec> = { ...GLOBAL_OPTIONS, ...specs };
  const config: Record<string, { type: "boolean" | "string"; short?: string; multiple?: boolean }> = {};
  for (const [name, s] of Object.entries(all)) {
    config[name] = {
      type: s.type,
      ...(s.short === undefined ? {} : { short: s.short }),
      ...(s.multiple === true ? { multiple: true } : {}),
    };
  }
  // strict:false so the messages are ours and name the verb; tokens let us check each option.
  const parsed = parseArgs({
    args: [...argv],
    options: config,
    strict: false,
    allowPositionals: true,
    tokens: true,
  });
  const shorts = new Map(
    Object.entries(all).flatMap(([n, s]) => (s.short === undefined ? [] : [[s.short, n] as const])),
  );
  for (const t of parsed.tokens) {
    if (t.kind !== "option") continue;
    const name = t.rawName.startsWith("--") ? t.name : (shorts.get(t.name) ?? t.name);
    const spec = all[name];
    if (spec === undefined) {
      throw usageError(
        `kumiki ${verb}: unknown option '${t.rawName}': run 'kumiki ${verb} --help' for its options`,
        {
          option: t.rawName,
        },
      );
    }
    if (spec.type === "string" && t.value === undefined) {
      throw usageError(
        `kumiki ${verb}: option '${t.rawName}' needs a value (${t.rawName} ${spec.value ?? "VALUE"})`,
        {
          option: t.rawName,
        },
      );
    }
    if (spec.type === "boolean" && t.inlineValue === true) {
      throw usageError(`kumiki ${verb}: option '${t.rawName}' takes no value`, { option: t.rawName });
    }
    if (spec.type === "string" && spec.multiple !== true) {
      const count = parsed.tokens.filter(
        (u) =>
          u.kind === "option" &&
          (u.rawName.startsWith("--") ? u.name : (shorts.get(u.name) ?? u.name)) === name,
      ).length;
      if (count > 1)
        throw usageError(`kumiki ${verb}: option '--${name}' given ${count} times; give it once`, {
          option: `--${name}`,
        });
    }
  }
  return { positionals: parsed.positionals, options: parsed.values as OptionValues };
}

/** A string option's value, or undefined. */
export function stringOption(options: OptionValues, name: string): string | undefined {
  const v = options[name];
  return typeof v === "string" ? v : undefined;
}

/** A repeatable string option's values, in order (none when absent). */
export function listOption(options: OptionValues, name: string): string[] {
  const v = options[name];
  return Array.isArray(v) ? v.map(String) : typeof v === "string" ? [v] : [];
}

/** A boolean option's value. */
export function flag(options: OptionValues, name: string): boolean {
  return options[name] === true;
}

/** The environment variable an option of a verb with `prefix` is read from: `KUMIKI_SERVE_` + `token-file` → `KUMIKI_SERVE_TOKEN_FILE`. */
export function environmentName(prefix: string, option: string): string {
  return `${prefix}${option.toUpperCase().replace(/-/g, "_")}`;
}

const TRUE_WORDS = new Set(["1", "true", "yes", "on"]);
const FALSE_WORDS = new Set(["0", "false", "no", "off"]);

/**
 * Fills the options the command line left out from environment variables named `prefix` and the
 * option (see {@link environmentName}): the way a service is configured where flags are awkward (a
 * container, a unit file). The command line wins, a list option's variable holds its values
 * separated by commas, an empty variable counts as unset, and a boolean takes 1/true/yes/on or
 * 0/false/no/off. A variable with the prefix that names no option (a typo) is a usage error, as an
 * unknown flag is. `sources` says which options came from which variable, so a bad value's error
 * names the variable the user set.
 */
export function withEnvironment(
  verb: string,
  parsed: ParsedArgs,
  specs: OptionSpecs,
  prefix: string,
  env: Readonly<Record<string, string | undefined>>,
): ParsedArgs & { readonly sources: ReadonlyMap<string, string> } {
  const byVariable = new Map(Object.keys(specs).map((name) => [environmentName(prefix, name), name]));
  for (const variable of Object.keys(env)) {
    if (!variable.startsWith(prefix) || byVariable.has(variable) || (env[variable] ?? "") === "") continue;
    throw usageError(
      `kumiki ${verb}: unknown environment variable ${variable}: the ones read are ${[...byVariable.keys()].join(", ")}`,
      { variable },
    );
  }
  const options: Record<string, boolean | string | readonly string[] | undefined> = { ...parsed.options };
  const sources = new Map<string, string>();
  for (const [variable, name] of byVariable) {
    const text = env[variable];
    if (text === undefined || text === "" || options[name] !== undefined) continue;
    const spec = specs[name]!;
    if (spec.type === "boolean") {
      const word = text.trim().toLowerCase();
      if (!TRUE_WORDS.has(word) && !FALSE_WORDS.has(word))
        throw usageError(
          `kumiki ${verb}: ${variable} takes 1, true, yes or on (or 0, false, no, off), got ${JSON.stringify(text.slice(0, 80))}`,
          { variable },
        );
      options[name] = TRUE_WORDS.has(word);
    } else if (spec.multiple === true) {
      options[name] = text
        .split(",")
        .map((v) => v.trim())
        .filter((v) => v !== "");
    } else options[name] = text;
    sources.set(name, variable);
  }
  return { positionals: parsed.positionals, options, sources };
}
