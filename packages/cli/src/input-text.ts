/**
 * Text a user hands the CLI as bytes (a file, standard input), decoded strictly: a Kumiki text is
 * UTF-8, so bytes that are not (a Latin-1 file, a binary) are refused naming the first bad byte,
 * never silently replaced (which would store U+FFFD where the user wrote something else). A
 * leading byte-order mark is an editor's marker, not text, and is dropped.
 */
import { failure } from "./errors.js";

const strict = new TextDecoder("utf-8", { fatal: true });

/** The offset of the first byte of `b` that does not belong to well-formed UTF-8, or -1. */
function firstInvalid(b: Uint8Array): number {
  for (let i = 0; i < b.length; ) {
    const c = b[i]!;
    const n =
      c < 0x80 ? 1 : c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3 : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
    if (n === 0 || i + n > b.length) return i;
    for (let k = 1; k < n; k++) if ((b[i + k]! & 0xc0) !== 0x80) return i;
    // Overlong forms, surrogates and code points past U+10FFFF.
    if (n === 3 && ((c === 0xe0 && b[i + 1]! < 0xa0) || (c === 0xed && b[i + 1]! >= 0xa0))) return i;
    if (n === 4 && ((c === 0xf0 && b[i + 1]! < 0x90) || (c === 0xf4 && b[i + 1]! >= 0x90))) return i;
    i += n;
  }
  return -1;
}

/** `bytes` as text, or a failure naming `from` and what is wrong (see the module comment). */
export function decodeInput(bytes: Uint8Array, from: string): string {
  const bom = bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  const body = bytes.subarray(bom);
  let text: string;
  try {
    text = strict.decode(body);
  } catch {
    const at = firstInvalid(body);
    const offset = at < 0 ? bom : at + bom;
    throw failure(
      "input-not-utf8",
      `${from} is not UTF-8 text (byte ${offset} is 0x${(bytes[offset] ?? 0).toString(16).padStart(2, "0")}): a Kumiki text is UTF-8; convert it (e.g. iconv -f latin1 -t utf-8) and give it again; nothing was changed`,
      { offset },
    );
  }
  const nul = text.indexOf("\u0000");
  if (nul >= 0) {
    throw failure(
      "input-binary",
      `${from} holds a NUL character (at character ${nul}): it looks like a binary file, not a Kumiki text; nothing was changed`,
      { offset: nul },
    );
  }
  return text;
}

/**
 * A message safe to print on a terminal: control characters other than newline and tab (which
 * could move the cursor or recolour the screen) shown as `\xNN`, and each line cut at 2,000
 * characters.
 */
export function printable(message: string): string {
  let out = "";
  for (const ch of message) {
    const c = ch.charCodeAt(0);
    const control = (c < 0x20 && c !== 0x0a && c !== 0x09) || (c >= 0x7f && c <= 0x9f);
    out += control ? `\\x${c.toString(16).padStart(2, "0")}` : ch;
  }
  return out
    .split("\n")
    .map((l) => (l.length > 2_000 ? `${l.slice(0, 2_000)}… (${l.length - 2_000} more characters)` : l))
    .join("\n");
}
