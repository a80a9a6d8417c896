/**
 * A read answered from the table of every definition kept for the workspace's state (the
 * context's `kept…`: no fold), else from the read store, keeping the table for the next read.
 */
import type { Store } from "@kumiki-graph/core";
import type { CommandContext } from "./command.js";

/** `kept`'s answer when it has one; else `fromStore`'s, after which the table is kept. */
export async function keptOrStore<T>(
  ctx: CommandContext,
  kept: Promise<T | undefined>,
  fromStore: (store: Store) => T,
): Promise<T> {
  const answer = await kept;
  if (answer !== undefined) return answer;
  const r = fromStore(await ctx.openReadStore());
  await ctx.keepDefinitions();
  return r;
}
