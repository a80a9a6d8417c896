/** Where the CLI reads and writes; injectable so tests run commands in-process. */
export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  /** All of standard input, for `--body-file -` and friends. Defaults to process.stdin. */
  readonly stdin?: () => Promise<string>;
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
  return Buffer.concat(chunks).toString("utf8");
}

/** The real process's streams. */
export const processIo: CliIo = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
  stdin: readProcessStdin,
  env: process.env,
  cwd: process.cwd(),
  isTTY: process.stderr.isTTY === true,
};
