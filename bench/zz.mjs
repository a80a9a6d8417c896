import { benchCliScale } from "./dist/cli-scale.js";
import { formatTable } from "./dist/harness.js";
console.log(formatTable(await benchCliScale()));
