// The page's script: @kumiki-graph/core in a browser (its `browser` condition: no Node built-in).
// Built with Vite (`npx vite build examples/browser`); the page shows what the store did.
import * as core from "@kumiki-graph/core";
import { scenario } from "./scenario.js";

const out = document.getElementById("result");
scenario(core).then(
  (result) => {
    out.textContent = JSON.stringify(result, null, 2);
    out.dataset.state = "done";
  },
  (e) => {
    out.textContent = String(e?.stack ?? e);
    out.dataset.state = "failed";
  },
);
