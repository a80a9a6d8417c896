import { readFileSync } from "node:fs";

/** Where the CLI writes; injectable so tests run commands in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
}

const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** The package version, read from this package's own package.json. */
export const CLI_VERSION: string = (
  JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as { version: string }
).version;

const HELP = `kumiki — edit a Kumiki program stored as a CRDT graph

Usage: kumiki <verb> [arguments] [options]

Options:
  -h, --help     show this help
  -V, --version  print the version

The store verbs of ai-edit.md §9.2 (view, list, add, replace, edit, rename, remove, patch, check,
fix, …) arrive with the store; docs/cli.md lists what exists.
`;

/**
 * Runs one CLI invocation and returns its exit code (§9.2.5: 0 done, 1 done and the operation
 * failed, 2 wrong argument shape). Never calls process.exit, so tests can call it in-process.
 */
export async function main(argv: readonly string[], io: CliIo = processIo): Promise<number> {
  const [first] = argv;
  if (first === undefined || first === "-h" || first === "--help" || first === "help") {
    io.stdout(HELP);
    return 0;
  }
  if (first === "-V" || first === "--version") {
    io.stdout(`kumiki ${CLI_VERSION}\n`);
    return 0;
  }
  const what = first.startsWith("-") ? `unknown option '${first}'` : `unknown verb '${first}'`;
  io.stderr(`kumiki: ${what}: run 'kumiki --help' for the verbs there are\n`);
  return 2;
}
