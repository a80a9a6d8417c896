import { flag } from "../args.js";
import type { Command, CommandContext } from "../command.js";
import { loadReadCore } from "../core.js";
import { unwrap, usageError } from "../errors.js";
import { receiptJson, receiptText, receiptWarnings, when } from "../format.js";
import { keptOrStore } from "../kept-or-store.js";

async function checkAgent(ctx: CommandContext, agent: string): Promise<void> {
  const { isAuthorId } = await loadReadCore();
  if (!isAuthorId(agent)) {
    throw usageError(
      `kumiki ${ctx.verb}: ${JSON.stringify(agent)} is not an agent id (e.g. agent:claude-1)`,
      { agent },
    );
  }
}

/** `kumiki lock <agent> <pattern…>`: reserves definitions for an agent; others' writes to them are refused. */
export const lock: Command = {
  name: "lock",
  summary:
    "reserve definitions (layer.name or patterns) for an agent: other authors' writes to them are refused",
  usage: ["lock <agent> <pattern…>"],
  examples: [
    "kumiki lock agent:claude-1 'reducer.*' slot.todos",
    "kumiki lock agent:a tile.TodoRow --task t-42",
  ],
  options: {},
  positionals: { min: 2, max: Number.POSITIVE_INFINITY, names: "agent pattern…" },
  async run(ctx) {
    const [agent, ...patterns] = ctx.positionals as [string, ...string[]];
    await checkAgent(ctx, agent);
    const store = await ctx.openStore();
    const receipt = unwrap(
      await store.lock({ agent, patterns, ...(ctx.task === undefined ? {} : { task: ctx.task }) }),
    );
    return {
      json: receiptJson(receipt),
      text: receiptText(`locked ${patterns.join(", ")} for ${agent}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};

/** `kumiki unlock <agent> [pattern…]`: releases an agent's locks (all of them, or those patterns). */
export const unlock: Command = {
  name: "unlock",
  summary: "release an agent's locks: all of them, or the patterns given (another agent's only with --force)",
  usage: ["unlock <agent> [pattern…] [--force]"],
  examples: [
    "kumiki unlock agent:claude-1",
    "kumiki unlock agent:claude-1 'reducer.*'",
    "kumiki unlock agent:gone --force   # another agent's lock: refused (exit 1) without --force",
  ],
  options: {
    force: {
      type: "boolean",
      description: "lift another agent's locks (the op log records that you did)",
    },
  },
  positionals: { min: 1, max: Number.POSITIVE_INFINITY, names: "agent pattern…" },
  async run(ctx) {
    const [agent, ...patterns] = ctx.positionals as [string, ...string[]];
    await checkAgent(ctx, agent);
    const store = await ctx.openStore();
    const receipt = unwrap(
      await store.unlock({
        agent,
        ...(patterns.length > 0 ? { patterns } : {}),
        ...(ctx.task === undefined ? {} : { task: ctx.task }),
        ...(flag(ctx.options, "force") ? { force: true } : {}),
      }),
    );
    return {
      json: receiptJson(receipt),
      text: receiptText(
        `unlocked ${patterns.length > 0 ? patterns.join(", ") : "every lock"} of ${agent}`,
        receipt,
      ),
      warnings: receiptWarnings(receipt),
    };
  },
};

/** `kumiki locks`: the locks in force. */
export const locks: Command = {
  name: "locks",
  summary: "list the locks in force: agent, pattern, since when",
  usage: ["locks"],
  examples: ["kumiki locks", "kumiki locks --json | jq '.locks[].pattern'"],
  options: {},
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    // None, when the state's kept status counts none (see `kumiki conflicts`).
    const none = ctx.keptStatus().then((s) => (s?.locks === 0 ? [] : undefined));
    const list = await keptOrStore(ctx, none, (store) => store.locks());
    return {
      json: { locks: list },
      text:
        list.length === 0
          ? "no locks"
          : list.map((l) => `${l.agent}  ${l.pattern}  since ${when(l.ts)} (${l.opId})`).join("\n"),
    };
  },
};
