// Node-free: the log of a Repo throws it (repo-op-log.ts, the browser entry's too); op-log-file.ts writes the file.
/**
 * The readable op log (`op-log.jsonl`) could not be brought up to date (a full disk): the graph's
 * document is stored all the same; readers open the document until a later write rewrites the file.
 */
export class OpLogFileError extends Error {
  readonly code = "op-log-file-failed";

  constructor(
    readonly path: string,
    cause: unknown,
  ) {
    const why = (cause as { code?: string }).code ?? (cause as Error).message ?? String(cause);
    super(
      `the graph is stored, but ${path} could not be brought up to date (${why}); reads open the store in full until a later write rewrites it`,
      { cause },
    );
  }
}
