/**
 * The token file of `kumiki serve --token-file F` (docs/sync.md): which bearer token may read or
 * write which graphs.
 *
 * ```json
 * { "format": 1,
 *   "tokens": [
 *     { "name": "agent-1", "token": "k1-4f9c…", "graphs": { "automerge:2Hc…": "write" } },
 *     { "name": "ci",      "token": "ci-77a1…", "graphs": { "*": "read" } } ] }
 * ```
 *
 * A graph is named by its Automerge URL or bare document id; `"*"` stands for every graph the
 * server holds or will hold. An entry for a graph overrides `"*"`. An entry may bind the authors of
 * the ops its token pushes: `"authors": ["agent:ci", "agent:build-*"]` (an author id, or a prefix
 * ending in `*`); a pushed op by anyone else is refused. Without it the token may push ops of any
 * author (a syncer trusted to carry other agents' ops). Tokens are kept only as SHA-256 digests in
 * memory and compared by digest.
 */
import { createHash } from "node:crypto";
import fs from "node:fs";
import { isValidDocumentId } from "@automerge/automerge-repo";
import { isAuthorId } from "@kumiki-graph/core";
import { fail, ok, type SyncResult } from "./result.js";

/** What a token may do with a graph. */
export type Access = "read" | "write";

/** The token file format this code reads. */
export const TOKEN_FILE_FORMAT = 1;
/** Tokens shorter than this are refused: they could be guessed. */
export const MIN_TOKEN_LENGTH = 16;

/** What one token grants. */
export interface Grant {
  /** The entry's name (for logs; never the token). */
  readonly name: string;
  /** The access to a graph (document id), or undefined for none. */
  access(documentId: string): Access | undefined;
  /**
   * The authors whose ops the token may push (author ids, or prefixes ending in `*`); undefined:
   * any author.
   */
  readonly authors?: readonly string[];
}

/** True when `author` is one of `authors` (an id, or a prefix ending in `*`). */
export function mayAuthor(authors: readonly string[], author: string): boolean {
  return authors.some((a) => (a.endsWith("*") ? author.startsWith(a.slice(0, -1)) : a === author));
}

/** The tokens a server accepts. */
export interface TokenTable {
  /** The grant of a presented token, or undefined when the token is unknown. */
  lookup(token: string): Grant | undefined;
  /** How many tokens there are. */
  readonly size: number;
  /**
   * For a table that changes while the server runs (tokens kept in a database): calls `listener`
   * after each change, so the server can review its connections. Returns the unsubscribe.
   */
  onChange?(listener: () => void): () => void;
}

/** One token as kept: its name, the SHA-256 digest of the token (hex), its access per graph. */
export interface TokenEntry {
  readonly name: string;
  readonly digest: string;
  /** Document id (or `"*"`) → access. */
  readonly graphs: Readonly<Record<string, Access>>;
  /** The authors its pushed ops may have (see {@link Grant.authors}); undefined: any. */
  readonly authors?: readonly string[];
}

/** A grant of write access to every graph (a server started without a token file). */
export const OPEN_GRANT: Grant = { name: "anyone", access: () => "write" };

/** The SHA-256 digest (hex) a token is kept and compared by. */
export function tokenDigest(token: string): string {
  return createHash("sha256").update(token, "utf8").digest("hex");
}

function documentIdOf(graph: string): string {
  return graph.startsWith("automerge:") ? graph.slice("automerge:".length) : graph;
}

/** A token table over entries (tokens compared by digest). */
export function tokenTableOf(entries: readonly TokenEntry[]): TokenTable {
  const table = new Map<string, Grant>();
  for (const e of entries) {
    const access = new Map(Object.entries(e.graphs));
    const all = access.get("*");
    table.set(e.digest, {
      name: e.name,
      access: (documentId) => access.get(documentId) ?? all,
      ...(e.authors === undefined ? {} : { authors: e.authors }),
    });
  }
  return { lookup: (token) => table.get(tokenDigest(token)), size: table.size };
}

/** Builds a token table from the file's JSON text; `source` names the file in messages. */
export function parseTokenFile(text: string, source = "the token file"): SyncResult<TokenTable> {
  const entries = parseTokenEntries(text, source);
  return entries.ok ? ok(tokenTableOf(entries.value)) : entries;
}

/** The entries of a token file's JSON text (tokens as digests); `source` names the file in messages. */
export function parseTokenEntries(text: string, source = "the token file"): SyncResult<TokenEntry[]> {
  const bad = (message: string) =>
    fail<TokenEntry[]>("token-file-invalid", `${source}: ${message} (docs/sync.md gives the format)`, {
      source,
    });
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    return bad(`not valid JSON: ${(e as Error).message}`);
  }
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return bad("must hold a JSON object");
  const { format, tokens, ...rest } = raw as Record<string, unknown>;
  const extra = Object.keys(rest);
  if (extra.length > 0) return bad(`unknown key ${JSON.stringify(extra[0])} (expected "format", "tokens")`);
  if (format !== TOKEN_FILE_FORMAT) return bad(`"format" must be ${TOKEN_FILE_FORMAT}`);
  if (!Array.isArray(tokens)) return bad('"tokens" must be a list');
  const entries: TokenEntry[] = [];
  const digests = new Set<string>();
  const names = new Set<string>();
  for (let i = 0; i < tokens.length; i++) {
    const entry: unknown = tokens[i];
    const at = `tokens[${i}]`;
    if (typeof entry !== "object" || entry === null || Array.isArray(entry))
      return bad(`${at} must be an object`);
    const { name, token, graphs, authors, ...more } = entry as Record<string, unknown>;
    const unknownKey = Object.keys(more)[0];
    if (unknownKey !== undefined)
      return bad(
        `${at}: unknown key ${JSON.stringify(unknownKey)} (expected "name", "token", "graphs", "authors")`,
      );
    if (
      authors !== undefined &&
      (!Array.isArray(authors) ||
        authors.length === 0 ||
        !authors.every((a) => typeof a === "string" && (a === "*" || isAuthorId(a.replace(/\*$/, "x")))))
    )
      return bad(
        `${at}.authors must be a non-empty list of author ids or prefixes ending in * (["agent:ci", "agent:build-*"])`,
      );
    if (typeof name !== "string" || name === "") return bad(`${at}.name must be a non-empty string`);
    if (names.has(name)) return bad(`${at}.name ${JSON.stringify(name)} is given twice`);
    names.add(name);
    if (typeof token !== "string" || token.length < MIN_TOKEN_LENGTH || /\s/.test(token))
      return bad(`${at}.token must be a string of at least ${MIN_TOKEN_LENGTH} characters without spaces`);
    if (typeof graphs !== "object" || graphs === null || Array.isArray(graphs))
      return bad(`${at}.graphs must be an object mapping graph URLs (or "*") to "read" or "write"`);
    const access: Record<string, Access> = {};
    for (const [graph, level] of Object.entries(graphs)) {
      const id = graph === "*" ? "*" : documentIdOf(graph);
      if (id !== "*" && !isValidDocumentId(id))
        return bad(`${at}.graphs: ${JSON.stringify(graph)} is not an Automerge URL, a document id or "*"`);
      if (level !== "read" && level !== "write")
        return bad(`${at}.graphs[${JSON.stringify(graph)}] must be "read" or "write"`);
      access[id] = level;
    }
    const key = tokenDigest(token);
    if (digests.has(key)) return bad(`${at}.token is the same as another entry's`);
    digests.add(key);
    entries.push({
      name,
      digest: key,
      graphs: access,
      ...(authors === undefined ? {} : { authors: authors as string[] }),
    });
  }
  return ok(entries);
}

/** Reads and parses a token file. */
export function loadTokenFile(file: string): SyncResult<TokenTable> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    return fail("token-file-invalid", `cannot read the token file ${file}: ${(e as Error).message}`, {
      source: file,
    });
  }
  return parseTokenFile(text, file);
}

/**
 * A token table whose tokens are replaced while a server runs: lookups go to the current tokens,
 * and every listener is told after each replacement (what the server reviews its connections on).
 * The token file read again ({@link TokenFileTable}) and the database's tokens
 * (`PostgresTokenTable`) are both this.
 */
export abstract class ChangingTokenTable implements TokenTable {
  private readonly listeners = new Set<() => void>();

  protected constructor(private current: TokenTable) {}

  lookup(token: string): Grant | undefined {
    return this.current.lookup(token);
  }

  get size(): number {
    return this.current.size;
  }

  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  /** Puts `next` in place and tells every listener. */
  protected replace(next: TokenTable): void {
    this.current = next;
    for (const l of this.listeners) l();
  }
}

/**
 * A token file's tokens, read again when asked ({@link TokenFileTable.reload}: what `kumiki serve`
 * does on SIGHUP): a server on it reviews its connections after each reload, so a token taken out
 * of the file is withdrawn without a restart. A file that does not read or parse leaves the tokens
 * as they were.
 */
export class TokenFileTable extends ChangingTokenTable {
  private constructor(
    /** The token file. */
    readonly file: string,
    tokens: TokenTable,
  ) {
    super(tokens);
  }

  /** Reads and parses `file` (a `token-file-invalid` failure when it cannot). */
  static load(file: string): SyncResult<TokenFileTable> {
    const t = loadTokenFile(file);
    return t.ok ? ok(new TokenFileTable(file, t.value)) : t;
  }

  /** Reads the file again; on success the new tokens apply and listeners are told. */
  reload(): SyncResult<{ readonly tokens: number }> {
    const t = loadTokenFile(this.file);
    if (!t.ok) return t;
    this.replace(t.value);
    return ok({ tokens: t.value.size });
  }
}
