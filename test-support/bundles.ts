/**
 * What a browser bundle test asks of a bundle: the Node built-ins its code still imports, and what
 * Vite warned of while building it (Vite stands an empty module in for a Node built-in, and says so).
 */

/** Node built-ins a browser bundle must not import (`node:fs`, `fs`, …), found in its code. */
export function nodeImports(code: string): string[] {
  const found = code.match(/["'](node:[a-z_/]+|fs|path|os|crypto|async_hooks|child_process)["']/g) ?? [];
  return [...new Set(found)];
}

/** A Vite logger that keeps what Vite warns of (it says when it stands in for a Node built-in). */
export function keptWarnings(warnings: string[]) {
  return {
    info: () => undefined,
    warn: (m: string) => void warnings.push(m),
    warnOnce: (m: string) => void warnings.push(m),
    error: (m: string) => void warnings.push(m),
    clearScreen: () => undefined,
    hasErrorLogged: () => false,
    hasWarned: false,
  };
}
