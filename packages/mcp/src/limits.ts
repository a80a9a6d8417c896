/**
 * The server's declared limits. They are published once as the kumiki://limits resource and never
 * repeated in results; a call that hits one fails with `limit-exceeded` naming it, never with a
 * silently shortened answer.
 */

/** The URI of the limits resource. */
export const LIMITS_URI = "kumiki://limits";

/** The names of the limits. */
export const LIMIT_NAMES = [
  "bodyBytes",
  "responseBytes",
  "wildcardResults",
  "httpSessions",
  "idleSeconds",
] as const;

/** One of {@link LIMIT_NAMES}. */
export type LimitName = (typeof LIMIT_NAMES)[number];

/** The limits in effect. */
export type Limits = Readonly<Record<LimitName, number>>;

/** The defaults of `kumiki mcp serve`. */
export const DEFAULT_LIMITS: Limits = {
  bodyBytes: 64 * 1024,
  responseBytes: 256 * 1024,
  wildcardResults: 200,
  httpSessions: 64,
  idleSeconds: 1800,
};

/** What each limit bounds, for the resource and docs/mcp.md. */
export const LIMIT_DESCRIPTIONS: Readonly<Record<LimitName, { unit: string; applies: string }>> = {
  bodyBytes: {
    unit: "bytes (UTF-8)",
    applies: "the body of kumiki_add and kumiki_replace; the find and replace texts of kumiki_edit, together",
  },
  responseBytes: {
    unit: "bytes (UTF-8)",
    applies: "the JSON of one result (its structuredContent)",
  },
  wildcardResults: {
    unit: "definitions",
    applies: "the definitions a kumiki_view pattern (slot.*, tile.Todo*, *) may match",
  },
  httpSessions: {
    unit: "sessions",
    applies: "the MCP sessions one HTTP server holds at once (a new one past it is refused, HTTP 503)",
  },
  idleSeconds: {
    unit: "seconds",
    applies:
      "how long an HTTP session may go without a request, and with no request or notification stream open, before the server ends it (the client then starts a new one)",
  },
};

/** The JSON of the kumiki://limits resource. */
export function limitsDocument(limits: Limits): {
  limits: { name: LimitName; value: number; unit: string; applies: string }[];
} {
  return {
    limits: LIMIT_NAMES.map((name) => ({ name, value: limits[name], ...LIMIT_DESCRIPTIONS[name] })),
  };
}

/** Whether `name` is a limit's name. */
export function isLimitName(name: string): name is LimitName {
  return (LIMIT_NAMES as readonly string[]).includes(name);
}

/**
 * The limits with `overrides` applied; a message for an unknown name or a value that is not a
 * positive safe integer.
 */
export function resolveLimits(
  overrides: Readonly<Record<string, number>> = {},
): { ok: true; value: Limits } | { ok: false; message: string } {
  const out: Record<LimitName, number> = { ...DEFAULT_LIMITS };
  for (const [name, value] of Object.entries(overrides)) {
    if (!isLimitName(name))
      return {
        ok: false,
        message: `unknown limit ${JSON.stringify(name)}: one of ${LIMIT_NAMES.join(", ")}`,
      };
    if (!Number.isSafeInteger(value) || value < 1)
      return { ok: false, message: `limit ${name} must be a positive integer, not ${value}` };
    out[name] = value;
  }
  return { ok: true, value: out };
}

/**
 * Parses `NAME=N` assignments (`kumiki mcp serve --limit wildcardResults=50`) into overrides for
 * {@link resolveLimits}; a message naming the first one that is not of that form. `flag` is the
 * option they came from, as the message names it.
 */
export function parseLimitAssignments(
  assignments: readonly string[],
  flag = "--limit",
): { ok: true; value: Record<string, number> } | { ok: false; message: string } {
  const out: Record<string, number> = {};
  for (const a of assignments) {
    const m = /^([A-Za-z]+)=(\d+)$/.exec(a.trim());
    if (m === null)
      return {
        ok: false,
        message: `${flag} ${JSON.stringify(a)} is not NAME=N (e.g. ${flag} wildcardResults=50)`,
      };
    out[m[1]!] = Number(m[2]);
  }
  const checked = resolveLimits(out);
  return checked.ok ? { ok: true, value: out } : checked;
}
