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
