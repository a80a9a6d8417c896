/**
 * `*` globs, the only pattern language of selectors and ownership locks: `*` matches any run of
 * characters (even none) and every other character matches itself — no regex, no character
 * classes, no escapes, so a pattern never means more than it shows.
 */

/** True when `name` matches a `*` pattern (the whole name; `*` is any run of characters, even none). */
export function matchesPattern(pattern: string, name: string): boolean {
  const parts = pattern.split("*");
  if (parts.length === 1) return pattern === name;
  const first = parts[0]!;
  const last = parts[parts.length - 1]!;
  if (!name.startsWith(first) || name.length < first.length + last.length || !name.endsWith(last))
    return false;
  let at = first.length;
  const end = name.length - last.length;
  for (let i = 1; i < parts.length - 1; i++) {
    const p = parts[i]!;
    const found = name.indexOf(p, at);
    if (found === -1 || found + p.length > end) return false;
    at = found + p.length;
  }
  return true;
}

/**
 * True when the definition `layer.name` matches a lock pattern `layer.namepattern` (`slot.todos*`
 * matches `slot.todos` and `slot.todosDone`; `*.draft` matches a draft of any layer).
 */
export function matchesLockPattern(pattern: string, layer: string, name: string): boolean {
  const dot = pattern.indexOf(".");
  if (dot <= 0) return false;
  const l = pattern.slice(0, dot);
  return (l === "*" || l === layer) && matchesPattern(pattern.slice(dot + 1), name);
}
