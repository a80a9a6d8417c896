/**
 * One `tools/call` of a session, in the order it happens: find the tool (unknown: a protocol error;
 * a write on a read-only session: `forbidden`), validate the arguments, build the call's context
 * (its author, signal, idempotency key and progress), run it behind a fence on the storage (a
 * tool of several writes under its key through `Store.once`), and answer: the result checked
 * against the tool's output schema and the response limit. session.ts serves it.
 */
import { opContentHash, quoted, type WriteOptions } from "@kumiki-graph/core";
import type { RequestHandlerExtra } from "@modelcontextprotocol/sdk/shared/protocol.js";
import {
  type CallToolResult,
  ErrorCode,
  type ServerNotification,
  type ServerRequest,
} from "@modelcontextprotocol/sdk/types.js";
import { argumentError, failure, isWireError, protocolError, result } from "./answers.js";
import type { Outcome, Tool, ToolContext } from "./tool.js";
import { TOOLS } from "./tools/index.js";
import { fromRejection, limitExceeded } from "./wire-error.js";

/** What every call of one session shares. */
export interface CallSession {
  /** The session's context without the call's own parts. */
  readonly ctx: Omit<ToolContext, "write" | "signal" | "progress">;
  /** The tools the session serves, by name. */
  readonly tools: ReadonlyMap<string, Tool>;
  /** True for a session that may only read (its token grants read access). */
  readonly readOnly: boolean;
  /** The author of the session's writes, when not the store's own. */
  readonly author?: string;
  /** Told the op-ids of every write the session answered (the losses told to it are of those). */
  readonly wrote: (opId: string) => void;
}

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** Answers one `tools/call` of `session` (see the module comment). */
export async function callTool(
  session: CallSession,
  name: string,
  raw: Record<string, unknown> | undefined,
  extra: Extra,
): Promise<CallToolResult> {
  const named = toolNamed(session, name);
  if ("answer" in named) return named.answer;
  const { tool } = named;
  const args = raw ?? {};
  const parsed = tool.input.safeParse(args);
  if (!parsed.success) return failure(argumentError(tool, args, parsed.error));
  const { idempotency_key: key, ...request } = parsed.data as { idempotency_key?: unknown };
  // A retry with the same key and arguments is answered with the first call's receipt (core
  // records the key with the op-ids, durably, before it appends them).
  const digest = typeof key === "string" ? opContentHash({ tool: name, arguments: request }) : "";
  const callCtx = callContext(
    session,
    tool,
    extra,
    typeof key === "string" ? { key, request: digest } : undefined,
  );
  const ran = await runBehindFence(session, tool, name, () => tool.run(parsed.data, callCtx), key, digest);
  if ("answer" in ran) return ran.answer;
  return answer(session, tool, name, ran.outcome);
}

/** The tool called `name`, or the answer when there is none this session may call. */
function toolNamed(session: CallSession, name: string): { tool: Tool } | { answer: CallToolResult } {
  const tool = session.tools.get(name);
  if (tool !== undefined) return { tool };
  if (session.readOnly && TOOLS.some((t) => t.name === name))
    return {
      answer: failure({
        kind: "forbidden",
        message: `${name} writes, and this session may only read (its token grants read access); nothing was done — use a token with write access`,
      }),
    };
  // The 2025-11-25 spec lists an unknown tool as a protocol error (-32602), not a tool result.
  const names = [...session.tools.keys()];
  throw protocolError(ErrorCode.InvalidParams, `no tool ${quoted(name)}; the tools are ${names.join(", ")}`, {
    kind: "unknown-tool",
    tools: names,
  });
}

/**
 * The call's context: the session's author, the call's signal (a request the client cancels,
 * notifications/cancelled, before its write is stored stores nothing: core looks at the signal
 * under the lock, just before the append; the SDK sends no answer to a cancelled request, as the
 * spec has it), the key for a tool of one write, and progress when the client asked for it.
 */
function callContext(
  session: CallSession,
  tool: Tool,
  extra: Extra,
  idempotency: WriteOptions["idempotency"],
): ToolContext {
  const signal = extra.signal;
  const write: WriteOptions = {
    signal,
    ...(session.author === undefined ? {} : { author: session.author }),
    ...(idempotency !== undefined && tool.idempotency === "write" ? { idempotency } : {}),
  };
  const token = extra._meta?.progressToken;
  return {
    ...session.ctx,
    signal,
    write,
    ...(token === undefined
      ? {}
      : {
          progress: (progress: number, total?: number, message?: string) =>
            void extra
              .sendNotification({
                method: "notifications/progress",
                params: {
                  progressToken: token,
                  progress,
                  ...(total === undefined ? {} : { total }),
                  ...(message === undefined ? {} : { message }),
                },
              })
              .catch(() => undefined),
        }),
  };
}

/**
 * Runs the tool once every write acknowledged before the call began (by any server of a shared
 * storage) is in the graph it reads and judges against; under its key through `Store.once` when
 * it is a tool of several writes. A storage that cannot be read, or a bug, is the answer.
 */
async function runBehindFence(
  session: CallSession,
  tool: Tool,
  name: string,
  run: () => Promise<Outcome<unknown>>,
  key: unknown,
  digest: string,
): Promise<{ outcome: Outcome<unknown> } | { answer: CallToolResult }> {
  const { store, log } = session.ctx;
  // A client that cancels at once writes the cancellation right behind the request, but the
  // two can reach this process in separate reads, and a write can take its lock, draft and pass
  // its last look at the signal without awaiting anything in between: let the input under way
  // be read first. This runs in the poll phase that read the request; a 1 ms timer puts at least
  // one more poll phase (and a millisecond for the client's next write) before the write, at
  // about 1 ms a write (a stored write takes 10-40 ms).
  if (tool.annotations.readOnlyHint !== true) await new Promise<void>((resolve) => setTimeout(resolve, 1));
  try {
    // A workspace's store looks at its folder anyway; a server's graph waits for its database.
    await store.fence();
  } catch (e) {
    log(`${name}: the storage could not be read: ${e instanceof Error ? e.message : String(e)}`);
    return {
      answer: failure({
        kind: "unavailable",
        retryable: true,
        message: `${name}: the graph's storage could not be read just now; nothing was done — call it again`,
      }),
    };
  }
  try {
    if (typeof key !== "string" || tool.idempotency === "write") return { outcome: await run() };
    // A tool of several writes: its whole answer is recorded under the key when it finishes
    // (a cancelled run included, with what it wrote), and a retry is answered with it.
    const once = await store.once(key, digest, run as () => Promise<Outcome<object>>);
    return {
      outcome: once.ok
        ? once
        : { ok: false, error: isWireError(once.error) ? once.error : fromRejection(once.error, log) },
    };
  } catch (e) {
    log(`${name}: internal error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    return {
      answer: failure({
        kind: "internal",
        message: `${name} failed inside the server (a bug); nothing is known to have changed`,
      }),
    };
  }
}

/** The tool's outcome as the answer: checked against its output schema and the response limit. */
function answer(session: CallSession, tool: Tool, name: string, outcome: Outcome<unknown>): CallToolResult {
  const { log, limits } = session.ctx;
  if (!outcome.ok) return failure(outcome.error);
  const checked = tool.output.safeParse(outcome.value);
  if (!checked.success) {
    log(`${name}: result does not match its output schema: ${checked.error.message}`);
    return failure({
      kind: "internal",
      message: `${name} produced a result that does not match its schema (a bug)`,
    });
  }
  const value = outcome.value as object;
  const lead = outcome.text;
  const bytes = Buffer.byteLength(JSON.stringify(value), "utf8") + Buffer.byteLength(lead ?? "", "utf8");
  if (bytes > limits.responseBytes) {
    const hint =
      tool.annotations.readOnlyHint === true
        ? "ask for less (one definition instead of a pattern, with_deps off, a check scope)"
        : "the write was done: read its effect back with kumiki_view or kumiki_history";
    return failure(
      limitExceeded(
        "responseBytes",
        limits.responseBytes,
        bytes,
        `the size in bytes of the ${name} result`,
        hint,
      ),
    );
  }
  if (tool.annotations.readOnlyHint !== true) for (const id of opIdsIn(value)) session.wrote(id);
  return result(value, false, lead);
}

/** The op-ids a write's answer holds (every `opIds` array in it, at any depth). */
function opIdsIn(value: unknown): string[] {
  const out: string[] = [];
  const walk = (v: unknown, depth: number): void => {
    if (depth > 4 || typeof v !== "object" || v === null) return;
    if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else
      for (const [k, x] of Object.entries(v))
        if (k === "opIds" && Array.isArray(x))
          out.push(...x.filter((s): s is string => typeof s === "string"));
        else walk(x, depth + 1);
  };
  walk(value, 0);
  return out;
}
