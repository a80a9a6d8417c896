/**
 * Branded ids validated with zod: `OpId` (op_ and a ULID), `DefId`, `AuthorId`, and a monotonic
 * op-id generator.
 */
import { z } from "zod";

/** Crockford base32, the ULID alphabet (no I, L, O, U). */
const CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/** A ULID: 10 characters of millisecond time (the first at most 7, 48 bits) and 16 of randomness. */
const ULID_BODY = "[0-7][0-9A-HJKMNP-TV-Z]{25}";
const OP_ID_RE = new RegExp(`^op_${ULID_BODY}$`);
const DEF_ID_RE = new RegExp(`^def_${ULID_BODY}$`);

/** An op's identity: `op_` and a 26-character Crockford ULID. Op-ids order like their ULIDs. */
export type OpId = string & { readonly __brand: "OpId" };

/**
 * A definition's identity. An `add` mints it from its own op-id (`def_` and the same ULID), so two
 * adds can never claim one identity; it never changes, whatever the definition is renamed to.
 */
export type DefId = string & { readonly __brand: "DefId" };

/** Who issued an op: `agent:claude-1`, `user:alice`. */
export type AuthorId = string & { readonly __brand: "AuthorId" };

/** Longest author id accepted (a limit, reported by name). */
export const MAX_AUTHOR_CHARS = 128;

/** True when `s` is a well-formed {@link OpId}. */
export function isOpId(s: unknown): s is OpId {
  return typeof s === "string" && s.length === 29 && OP_ID_RE.test(s);
}

/** True when `s` is a well-formed {@link DefId}. */
export function isDefId(s: unknown): s is DefId {
  return typeof s === "string" && s.length === 30 && DEF_ID_RE.test(s);
}

const AUTHOR_RE = /^[A-Za-z0-9][A-Za-z0-9._:@/+-]*$/;

/** True when `s` is a well-formed {@link AuthorId}: printable, no whitespace, at most 128 characters. */
export function isAuthorId(s: unknown): s is AuthorId {
  return typeof s === "string" && s.length > 0 && s.length <= MAX_AUTHOR_CHARS && AUTHOR_RE.test(s);
}

/** Validates an {@link OpId} at the edge. */
export const OpIdSchema = z
  .string()
  .regex(OP_ID_RE, "an op-id is op_ followed by a 26-character Crockford ULID (0-9, A-Z without I, L, O, U)")
  .transform((s) => s as OpId);

/** Validates a {@link DefId} at the edge. */
export const DefIdSchema = z
  .string()
  .regex(DEF_ID_RE, "a definition id is def_ followed by a 26-character Crockford ULID")
  .transform((s) => s as DefId);

/** Validates an {@link AuthorId} at the edge. */
export const AuthorIdSchema = z
  .string()
  .min(1, "an author id is not empty")
  .max(MAX_AUTHOR_CHARS, `an author id has at most ${MAX_AUTHOR_CHARS} characters`)
  .regex(AUTHOR_RE, "an author id is letters, digits and . _ : @ / + - (no spaces), e.g. agent:claude-1")
  .transform((s) => s as AuthorId);

/** The identity an `add` with op-id `opId` mints for its definition. */
export function defIdOf(opId: OpId): DefId {
  return `def_${opId.slice(3)}` as DefId;
}

/** The millisecond time encoded in a ULID-based id (op-id or def-id). */
export function idTime(id: OpId | DefId): number {
  const ulid = id.slice(id.indexOf("_") + 1);
  let t = 0;
  for (let i = 0; i < 10; i++) t = t * 32 + CROCKFORD.indexOf(ulid[i]!);
  return t;
}

/** Options of {@link createOpIdGenerator}; both exist so tests can be deterministic. */
export interface OpIdGeneratorOptions {
  /** Milliseconds since the epoch; defaults to `Date.now`. */
  readonly now?: () => number;
  /** Fills the array with random bytes; defaults to `crypto.getRandomValues`. */
  readonly random?: (bytes: Uint8Array) => void;
}

/** Produces strictly increasing op-ids. */
export interface OpIdGenerator {
  /**
   * A new op-id, greater than every id this generator returned before and greater than `floor`
   * when given. The store passes the greatest op-id it holds, so a local op always sorts after every
   * op it has seen, even one from a replica whose clock runs ahead.
   */
  next(floor?: OpId): OpId;
}

const MAX_TIME = 2 ** 48 - 1;

function encodeTime(t: number): string {
  let out = "";
  let v = t;
  for (let i = 0; i < 10; i++) {
    out = CROCKFORD[v % 32]! + out;
    v = Math.floor(v / 32);
  }
  return out;
}

/** Increments a Crockford string by one; undefined when it overflows. */
function increment(s: string): string | undefined {
  const chars = s.split("");
  for (let i = chars.length - 1; i >= 0; i--) {
    const d = CROCKFORD.indexOf(chars[i]!);
    if (d < 31) {
      chars[i] = CROCKFORD[d + 1]!;
      return chars.join("");
    }
    chars[i] = "0";
  }
  return undefined;
}

/**
 * A monotonic ULID generator (op-ids in the same millisecond count up from the last one's random
 * part instead of drawing a fresh one), so that ids one process issues are strictly ordered even
 * within a millisecond and when the clock steps back.
 */
export function createOpIdGenerator(options: OpIdGeneratorOptions = {}): OpIdGenerator {
  const now = options.now ?? Date.now;
  const random = options.random ?? ((bytes: Uint8Array) => crypto.getRandomValues(bytes));
  let last = "";
  const fresh = (): string => {
    const bytes = new Uint8Array(16);
    random(bytes);
    let out = "";
    for (const b of bytes) out += CROCKFORD[b & 31]!;
    return out;
  };
  const nextAfter = (ulid: string): string => {
    const rand = increment(ulid.slice(10));
    if (rand !== undefined) return ulid.slice(0, 10) + rand;
    // The 80 random bits of one millisecond ran out: borrow the next millisecond.
    const nextTime = increment(ulid.slice(0, 10));
    if (nextTime === undefined || nextTime[0]! > "7") throw new Error("op-id space exhausted");
    return nextTime + fresh();
  };
  return {
    next(floor?: OpId): OpId {
      const t = Math.min(MAX_TIME, Math.max(0, Math.floor(now())));
      const time = encodeTime(t);
      // Within this generator: a new millisecond draws fresh randomness, the same (or an earlier
      // one: the clock stepped back) counts up from the last id.
      let ulid = last === "" || time > last.slice(0, 10) ? time + fresh() : nextAfter(last);
      const f = floor?.slice(3);
      if (f !== undefined && ulid <= f) {
        // Counting up from another replica's id would collide with every replica doing the same:
        // take the millisecond after it, with fresh randomness.
        ulid = `${encodeTime(Math.min(MAX_TIME, idTime(floor!) + 1))}${fresh()}`;
        if (ulid <= f) ulid = nextAfter(f);
      }
      last = ulid;
      return `op_${ulid}` as OpId;
    },
  };
}
