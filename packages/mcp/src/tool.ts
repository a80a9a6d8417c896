/**
 * What one MCP tool is: its name, strict input schema, declared output schema, annotations, and a
 * handler that calls core and returns a value or a wire error. The server owns validation, the
 * error envelope, the text mirror and the response limit, so a handler only maps core to JSON.
 */
import type { CapabilityManifest, Result, Store, StoreResult, WriteOptions } from "@kumiki-graph/core";
import type { z } from "zod";
import type { Limits } from "./limits.js";
import { fromRejection, type WireError } from "./wire-error.js";

/** MCP tool annotations (hints to the client; the server does not rely on them). */
export interface ToolAnnotations {
  readonly title?: string;
  readonly readOnlyHint?: boolean;
  readonly destructiveHint?: boolean;
  readonly idempotentHint?: boolean;
  readonly openWorldHint?: boolean;
}

/** What a handler gets. */
export interface ToolContext {
  readonly store: Store;
  /** The workspace's kumiki.caps.json, for check and fix (the store's gate has it already). */
  readonly capabilities?: CapabilityManifest;
  readonly limits: Limits;
  /** The operator's log (stderr): details that do not belong in a message to the model. */
  readonly log: (line: string) => void;
  /** This call's signal: aborted when the client cancels it (long tools stop between steps). */
  readonly signal?: AbortSignal;
  /**
   * What every store write of this call is given: the session's author, this call's signal and,
   * for a tool of one write called with an `idempotency_key`, the key.
   */
  readonly write: WriteOptions;
  /**
   * Sends `notifications/progress` for this call; present only when the client gave a
   * `progressToken`. `progress` only grows; `total` is the total as far as it is known.
   */
  readonly progress?: (progress: number, total?: number, message?: string) => void;
}

/**
 * A handler's outcome: the structured result, or the failure that produced no answer. A success
 * may lead with a `text` of its own (kumiki_view's Kumiki text): sent once, as the first text
 * item, as it is; the structured result (and its JSON, the second text item) refers to it instead
 * of repeating it.
 */
export type Outcome<T> = Result<T, WireError> & { readonly text?: string };

/** A tool as declared, with its argument and result types. */
export interface ToolSpec<I extends z.ZodObject, O extends z.ZodObject> {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  /** A `z.strictObject`: an argument it does not declare is refused by name. */
  readonly input: I;
  /** The successful result's shape; the declared outputSchema is this or the error envelope. */
  readonly output: O;
  readonly annotations: ToolAnnotations;
  /**
   * What its `idempotency_key` covers: `write` (the default), the tool's one store write; `answer`,
   * a tool of several writes: its whole answer is recorded and a retry is answered with it.
   */
  readonly idempotency?: "write" | "answer";
  run(args: z.output<I>, ctx: ToolContext): Promise<Outcome<z.output<O>>> | Outcome<z.output<O>>;
}

/** A tool with its types erased, as the server holds it. */
export interface Tool {
  readonly name: string;
  readonly title: string;
  readonly description: string;
  readonly input: z.ZodObject;
  readonly output: z.ZodObject;
  readonly annotations: ToolAnnotations;
  /** What its `idempotency_key` covers (see `ToolSpec.idempotency`). */
  readonly idempotency: "write" | "answer";
  /** `args` must already have passed `input`. */
  run(args: unknown, ctx: ToolContext): Promise<Outcome<unknown>>;
}

/** Declares a tool. */
export function defineTool<I extends z.ZodObject, O extends z.ZodObject>(spec: ToolSpec<I, O>): Tool {
  return {
    name: spec.name,
    title: spec.title,
    description: spec.description,
    input: spec.input,
    output: spec.output,
    annotations: { title: spec.title, ...spec.annotations },
    idempotency: spec.idempotency ?? "write",
    run: async (args, ctx) => spec.run(args as z.output<I>, ctx),
  };
}

/** A successful outcome. */
export function answer<T>(value: T): Outcome<T> {
  return { ok: true, value };
}

/** A successful outcome that leads with a text of its own (see {@link Outcome}). */
export function answerWithText<T>(value: T, text: string): Outcome<T> {
  return { ok: true, value, text };
}

/** A failed outcome. */
export function fail<T = never>(error: WireError): Outcome<T> {
  return { ok: false, error };
}

/** A core result mapped to an outcome: the value through `map`, a rejection as a wire error. */
export function fromCore<T, U>(r: StoreResult<T>, ctx: ToolContext, map: (value: T) => U): Outcome<U> {
  return r.ok ? answer(map(r.value)) : fail(fromRejection(r.error, ctx.log));
}
