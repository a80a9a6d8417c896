/**
 * A sync server's log as an operator's log collector reads it: one JSON object per line, with a
 * level, a time and the event's fields (pino, the Node ecosystem's structured logger: its output is
 * what Loki, Elasticsearch and Cloud Logging parse without configuration). Without a logger the
 * server writes the same events as text lines (`SyncServerOptions.log`).
 */
import os from "node:os";
import { pino } from "pino";

/** The fields of one event: what happened (`event`), and who and what it concerns. */
export type LogFields = Readonly<Record<string, unknown>>;

/** A structured log in pino's call shape (fields, then the message); a pino logger is one. */
export interface ServerLogger {
  /** An event in the normal course (a connection, a graph loaded). */
  info(fields: LogFields, message: string): void;
  /** A refusal or a fault the server survives (a bad token, a storage error it retries). */
  warn(fields: LogFields, message: string): void;
  /** A failure that lost service (a graph that could not be stored). */
  error(fields: LogFields, message: string): void;
}

/** The levels a {@link jsonServerLogger} writes from. */
export type LogLevel = "info" | "warn" | "error";

/**
 * A logger writing JSON lines to `fd` (default 2, stderr), synchronously so that nothing is lost
 * when the process ends: `{"level":"warn","time":"…","pid":…,"hostname":…,"service":
 * "kumiki-sync-server", …fields, "msg": …}`. Levels below `level` (default info) are dropped.
 */
export function jsonServerLogger(
  options: { readonly fd?: number; readonly level?: LogLevel } = {},
): ServerLogger {
  return pino(
    {
      level: options.level ?? "info",
      base: { pid: process.pid, hostname: os.hostname(), service: "kumiki-sync-server" },
      timestamp: pino.stdTimeFunctions.isoTime,
      // The level by name ("warn"), as people and collectors filter on it, not pino's number.
      formatters: { level: (label) => ({ level: label }) },
    },
    pino.destination({ fd: options.fd ?? 2, sync: true }),
  );
}
