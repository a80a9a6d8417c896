import path from "node:path";
import type { Command } from "../command.js";
import { loadStorage } from "../core.js";
import { fromRejection } from "../errors.js";

/** `kumiki init [DIR]`: creates an empty workspace (`DIR/.kumiki/`). */
export const init: Command = {
  name: "init",
  summary: "create an empty workspace (.kumiki/) in DIR or the current directory",
  usage: ["init [DIR]"],
  examples: ["kumiki init", "kumiki init ./todo-app && kumiki --store ./todo-app import app.kumiki"],
  options: {},
  positionals: { min: 0, max: 1, names: "DIR" },
  async run(ctx) {
    const dir = path.resolve(ctx.io.cwd, ctx.positionals[0] ?? ctx.storeDir ?? ".");
    const ws = await (await loadStorage()).initWorkspace(dir);
    if (!ws.ok) throw fromRejection(ws.error);
    await ws.value.log.close();
    return {
      json: { root: ws.value.paths.root, graph: ws.value.config.graph },
      text: `initialised an empty workspace in ${ws.value.paths.dir}`,
    };
  },
};
