import { textArgument } from "../body.js";
import type { Command } from "../command.js";
import { unwrap } from "../errors.js";
import { receiptJson, receiptText, receiptWarnings } from "../format.js";
import { checkLayer, checkName, checkQname } from "../shape.js";

const bodyFile = {
  "body-file": {
    type: "string",
    value: "PATH",
    description:
      "read the body from PATH ('-' = stdin), whitespace and newlines kept (not with a positional body)",
  },
} as const;

/** `kumiki add <layer> <name> <body…>`: adds a definition (§9.2.2). */
export const add: Command = {
  name: "add",
  summary: "add a definition: kumiki add <layer> <name> <body>",
  usage: ["add <layer> <name> <body…>", "add <layer> <name> --body-file <PATH|->"],
  examples: [
    "kumiki add slot todos 'Map(TodoId, Todo) = {}'",
    "kumiki add type TodoId 'Id(Todo)'",
    "kumiki add reducer addTodo --body-file addTodo.body   # multi-line do= block",
    "printf 'on=ui.click(Add)\\n  do= ...' | kumiki add reducer add --body-file -",
  ],
  options: bodyFile,
  positionals: { min: 2, max: Number.POSITIVE_INFINITY, names: "layer name body…" },
  async run(ctx) {
    const [given, name, ...words] = ctx.positionals as [string, string, ...string[]];
    const layer = await checkLayer(ctx.verb, given);
    await checkName(ctx.verb, name);
    const { text } = await textArgument(ctx, words, "body-file", "body");
    const store = await ctx.openStore();
    const receipt = unwrap(
      await store.add({ layer, name, body: text, ...(ctx.task === undefined ? {} : { task: ctx.task }) }),
    );
    return {
      json: receiptJson(receipt),
      text: receiptText(`added ${layer}.${name}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};

/** `kumiki replace <layer.name> <body…>`: replaces a definition's body (§9.2.2). */
export const replace: Command = {
  name: "replace",
  summary: "replace a definition's body: kumiki replace <layer.name> <body>",
  usage: ["replace <layer.name> <body…>", "replace <layer.name> --body-file <PATH|->"],
  examples: [
    "kumiki replace slot.todos 'Map(TodoId, Todo) = {}'",
    "kumiki replace reducer.addTodo --body-file addTodo.body",
  ],
  options: bodyFile,
  positionals: { min: 1, max: Number.POSITIVE_INFINITY, names: "layer.name body…" },
  async run(ctx) {
    const [qname, ...words] = ctx.positionals as [string, ...string[]];
    await checkQname(ctx.verb, qname);
    const { text } = await textArgument(ctx, words, "body-file", "body");
    const store = await ctx.openStore();
    const receipt = unwrap(
      await store.replace({ qname, body: text, ...(ctx.task === undefined ? {} : { task: ctx.task }) }),
    );
    return {
      json: receiptJson(receipt),
      text: receiptText(`replaced ${qname}`, receipt),
      warnings: receiptWarnings(receipt),
    };
  },
};
