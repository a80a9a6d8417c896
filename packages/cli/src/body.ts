/** Where a definition body or a patch comes from: the words on the command line, or a file. */
import { stringOption } from "./args.js";
import type { CommandContext } from "./command.js";
import { usageError } from "./errors.js";

/**
 * The text given by `words` (joined with single spaces, ai-edit.md §9.2.2) or by `--<fileOption>`
 * (a path, or `-` for stdin, read as it is: whitespace and newlines kept). Both, or neither, is a
 * usage error, decided before the store is opened.
 */
export async function textArgument(
  ctx: CommandContext,
  words: readonly string[],
  fileOption: string,
  what: string,
): Promise<{ readonly text: string; readonly from: "argument" | "file" }> {
  const file = stringOption(ctx.options, fileOption);
  if (file !== undefined && words.length > 0) {
    throw usageError(
      `kumiki ${ctx.verb}: give the ${what} either on the command line or with --${fileOption}, not both (they are mutually exclusive)`,
      { option: `--${fileOption}` },
    );
  }
  if (file !== undefined) return { text: await ctx.readInput(file), from: "file" };
  if (words.length === 0) {
    throw usageError(
      `kumiki ${ctx.verb}: no ${what}: give it after the name, or with --${fileOption} FILE (- for stdin) for a multi-line ${what}`,
    );
  }
  return { text: words.join(" "), from: "argument" };
}
