/** How a long-running verb (`serve`, `mcp serve --http`) waits to be stopped. */

/** Resolves with the first SIGINT or SIGTERM, then stops listening for either. */
export function untilStopped(): Promise<NodeJS.Signals> {
  return new Promise<NodeJS.Signals>((resolve) => {
    const on = (s: NodeJS.Signals) => {
      process.off("SIGINT", on);
      process.off("SIGTERM", on);
      resolve(s);
    };
    process.on("SIGINT", on);
    process.on("SIGTERM", on);
  });
}
