import path from "node:path";
import { cloneWorkspace } from "@kumiki-graph/sync-server";
import { stringOption } from "../args.js";
import type { Command } from "../command.js";
import { fromRejection } from "../errors.js";
import { timeoutOption, tokenFrom } from "./sync.js";

/** `kumiki clone URL DIR`: a new workspace holding a graph from a sync server, with it as `origin`. */
export const clone: Command = {
  name: "clone",
  summary: "make a workspace in DIR from a graph on a sync server (recorded as remote origin)",
  usage: ["clone ws://HOST:PORT/automerge:… DIR [--token-file F] [--timeout SECONDS]"],
  examples: [
    "kumiki clone ws://127.0.0.1:7420/automerge:2Hc… ./agent-2 --token-file agent-2.token",
    "kumiki clone \"$(kumiki remote list --json | jq -r '.remotes[0].url')/$(jq -r .graph .kumiki/config.json)\" ../copy",
  ],
  options: {
    "token-file": {
      type: "string",
      value: "F",
      description: "a file holding the token (recorded with origin)",
    },
    timeout: { type: "string", value: "SECONDS", description: "give up after this long (default 60)" },
  },
  positionals: { min: 2, max: 2, names: "URL DIR" },
  async run(ctx) {
    const tokenFileOption = stringOption(ctx.options, "token-file");
    const tokenFile = tokenFileOption === undefined ? undefined : path.resolve(ctx.io.cwd, tokenFileOption);
    const token = tokenFrom(ctx, tokenFile);
    const r = await cloneWorkspace(ctx.positionals[0]!, path.resolve(ctx.io.cwd, ctx.positionals[1]!), {
      timeoutMs: timeoutOption(ctx),
      onProgress: (m) => ctx.progress(m),
      ...(token === undefined ? {} : { token }),
      ...(tokenFile === undefined ? {} : { tokenFile }),
    });
    if (!r.ok) throw fromRejection(r.error);
    return {
      json: r.value,
      text: `cloned ${r.value.graph} (${r.value.ops} ops) into ${r.value.root}; remote origin → ${r.value.server}`,
    };
  },
};
