/**
 * The text of a definition file and the stored text it stands for. A stored text can start with
 * blank lines (the trivia that separated it from the definition above it in an imported program);
 * its file starts at its first non-blank line and ends with a newline. Going back, the stored
 * text's leading blank lines and missing final newline are put back, so a file nobody edited gives
 * back exactly the stored text, and an edited one keeps the program's layout around the
 * definition.
 */

/** The run of whitespace-only lines a text starts with (ending at a line break). */
function leadingBlankLines(text: string): string {
  let end = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 10) end = i + 1;
    else if (c !== 32 && c !== 9 && c !== 13) break;
  }
  return text.slice(0, end);
}

/** What a definition's file holds for its stored text (with current names). */
export function fileTextOf(source: string): string {
  const body = source.slice(leadingBlankLines(source).length);
  return body.endsWith("\n") ? body : `${body}\n`;
}

/**
 * The stored text for a file's content: the file as it is, with the leading blank lines of
 * `previous` (the stored text it replaces) and without the final newline when `previous` had
 * none. `fileTextOf(sourceFromFile(fileTextOf(s), s)) === fileTextOf(s)` and
 * `sourceFromFile(fileTextOf(s), s) === s`.
 */
export function sourceFromFile(file: string, previous?: string): string {
  if (previous === undefined) return file;
  const prefix = leadingBlankLines(previous);
  // Drop the newline fileTextOf added, not one the file's author wrote after it.
  const strip = !previous.endsWith("\n") && file.endsWith("\n") && !file.endsWith("\n", file.length - 1);
  return prefix + (strip ? file.slice(0, -1) : file);
}
