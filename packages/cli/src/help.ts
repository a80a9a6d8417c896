/**
 * `kumiki --help` and `kumiki <verb> --help`.
 */
import { environmentName, GLOBAL_OPTIONS, type OptionSpecs } from "./args.js";
import type { Command } from "./command.js";

function optionLines(specs: OptionSpecs, environment?: string): string[] {
  const rows = Object.entries(specs).map(([name, s]) => {
    const head = `${s.short === undefined ? "    " : `-${s.short}, `}--${name}${s.type === "string" ? ` ${s.value ?? "VALUE"}` : ""}`;
    const env = environment === undefined ? "" : ` (or ${environmentName(environment, name)})`;
    return [head, `${s.description}${env}`] as const;
  });
  const width = Math.max(0, ...rows.map(([h]) => h.length));
  return rows.map(([h, d]) => `  ${h.padEnd(width)}  ${d}`);
}

/** `kumiki <verb> --help`. */
export function verbHelp(c: Command): string {
  const lines = [`kumiki ${c.name} — ${c.summary}`, "", "Usage:", ...c.usage.map((u) => `  kumiki ${u}`)];
  if (Object.keys(c.options).length > 0) lines.push("", "Options:", ...optionLines(c.options, c.environment));
  lines.push("", "Global options:", ...optionLines(GLOBAL_OPTIONS));
  if (c.examples.length > 0) lines.push("", "Examples:", ...c.examples.map((e) => `  ${e}`));
  return `${lines.join("\n")}\n`;
}

/** `kumiki --help`. */
export function mainHelp(commands: readonly Pick<Command, "name" | "summary">[]): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `kumiki — edit a Kumiki program stored as a CRDT graph

Usage: kumiki <verb> [arguments] [options]

Verbs:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join("\n")}

Options:
  -h, --help     show this help; 'kumiki <verb> --help' shows a verb's options and examples
  -V, --version  print the version

Exit codes: 0 done; 1 done, and the operation failed; 2 wrong argument shape (nothing was read).
`;
}
