import { decodeInput } from "./input-text.js";

/** Where the CLI reads and writes; injectable so tests run commands in-process. */
export interface CliIo {
  /** Writes to standard output (the answer). */
  readonly stdout: (text: string) => void;
  /** Writes to standard error (warnings, progress, errors). */
  readonly stderr: (text: string) => void;
  /** All of standard input, for `--body-file -` and friends. Defaults to process.stdin. */
  readonly stdin?: () => Promise<string>;
  /** One line of standard input at a time (for `fix --interactive`); defaults to splitting `stdin`. */
  readonly readLine?: () => Promise<string | undefined>;
  /** The environment (KUMIKI_AUTHOR, NO_COLOR, …). Defaults to process.env. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** The directory relative paths and workspace discovery start from. Defaults to process.cwd(). */
  readonly cwd?: string;
  /** True when stderr is a terminal: progress is shown only then. Defaults to false in-process. */
  readonly isTTY?: boolean;
}

async function readProcessStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return decodeInput(Buffer.concat(chunks), "standard input");
}

let lines: AsyncIterator<string> | undefined;

async function readProcessLine(): Promise<string | undefined> {
  if (lines === undefined) {
    const { createInterface } = await import("node:readline");
    lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY })[
      Symbol.asyncIterator
    ]();
  }
  const next = await lines.next();
  return next.done === true ? undefined : next.value;
}

/** The real process's streams. */
export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: readProcessStdin,
  readLine: readProcessLine,
  env: process.env,
  cwd: process.cwd(),
  isTTY: process.stderr.isTTY === true,
};
