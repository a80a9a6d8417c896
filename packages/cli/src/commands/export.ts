import { writeFile } from "node:fs/promises";
import path from "node:path";
import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { loadCore } from "../core.js";
import { failure } from "../errors.js";
import { plural } from "../format.js";

/** `kumiki export [-o file]`: the graph as one .kumiki program (an unedited import, byte for byte). */
export const exportCommand: Command = {
  name: "export",
  summary: "write the graph as one .kumiki program (an unedited import comes back byte for byte)",
  usage: ["export [-o <file>]"],
  examples: [
    "kumiki export > app.kumiki",
    "kumiki export -o app.kumiki",
    "kumiki export --json | jq -r .text",
  ],
  options: {
    output: { type: "string", short: "o", value: "FILE", description: "write to FILE instead of stdout" },
  },
  positionals: { min: 0, max: 0, names: "none" },
  async run(ctx) {
    const out = stringOption(ctx.options, "output");
    const [core, store] = await Promise.all([loadCore(), ctx.openReadStore()]);
    const text = core.exportProgram(store);
    const definitions = store.status().definitions;
    if (out === undefined) return { json: { text, definitions }, text, raw: true };
    const p = path.resolve(ctx.io.cwd, out);
    try {
      await writeFile(p, text);
    } catch (e) {
      throw failure(
        "file-unwritable",
        `cannot write ${out}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
        {
          path: p,
        },
      );
    }
    return {
      json: { file: p, bytes: Buffer.byteLength(text), definitions },
      text: `wrote ${plural(definitions, "definition")} to ${out}`,
    };
  },
};
