import fs from "node:fs";
import path from "node:path";
import { LAYERS } from "../lang/layers.js";
import { writeFileAtomic } from "../store/files.js";
import { makeDirs } from "../store/make-dirs.js";
import { ok, reject, type StoreResult } from "../store/result.js";
import { DEFINITION_EXT, LAYER_DIRS } from "./layout.js";

const strict = new TextDecoder("utf-8", { fatal: true });

/** The offset of the first byte of `bytes` that is not part of well-formed UTF-8 (bytes known bad). */
function firstBadByte(bytes: Uint8Array): number {
  // Byte by byte (only on the error path, and definition files are small): the decoder throws at
  // the byte that shows the sequence is bad; the sequence began at its lead byte, up to 3 back.
  const d = new TextDecoder("utf-8", { fatal: true });
  for (let i = 0; i < bytes.length; i++) {
    try {
      d.decode(bytes.subarray(i, i + 1), { stream: true });
    } catch {
      for (let j = i - 1; j >= Math.max(0, i - 3); j--) {
        if (bytes[j]! >= 0xc0) return j;
        if ((bytes[j]! & 0xc0) !== 0x80) break;
      }
      return i;
    }
  }
  return Math.max(0, bytes.length - 1);
}

/** A symbolic link where the tree must have a folder or file of its own: refused, naming it. */
function linkRefusal(link: string): StoreResult<never> {
  let to = "?";
  try {
    to = fs.readlinkSync(link);
  } catch {
    // Gone or unreadable since: the refusal names the link alone.
  }
  return reject(
    "tree-unreadable",
    `${link} is a symbolic link (to ${to}): the tree's layer folders and definition files must be real ones inside the workspace, so that the sync never writes elsewhere; replace the link with a folder or file of its own; nothing was read or written`,
    { path: link, reason: "symbolic-link" },
  );
}

/**
 * Each layer folder of the tree at `root` that exists, with its entries, listed once; refused
 * before any file is read when a layer folder, or a definition file in one, is a symbolic link
 * (the tree is written as well as read, and a link would have the sync write wherever it points,
 * outside the workspace).
 */
function layerListings(root: string): StoreResult<{ dir: string; abs: string; entries: fs.Dirent[] }[]> {
  const out: { dir: string; abs: string; entries: fs.Dirent[] }[] = [];
  for (const layer of LAYERS) {
    const dir = LAYER_DIRS[layer];
    const abs = path.join(root, dir);
    let entries: fs.Dirent[];
    try {
      if (fs.lstatSync(abs).isSymbolicLink()) return linkRefusal(abs);
      entries = fs.readdirSync(abs, { withFileTypes: true });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === "ENOENT") continue;
      return reject("tree-unreadable", `cannot list ${abs}: ${(e as Error).message}`, { path: abs });
    }
    const link = entries.find((e) => e.isSymbolicLink() && e.name.endsWith(DEFINITION_EXT));
    if (link !== undefined) return linkRefusal(path.join(abs, link.name));
    out.push({ dir, abs, entries });
  }
  return ok(out);
}

/**
 * The definition files of the tree at `root`: every `*.kumiki` file directly in a layer folder,
 * tree path (`slots/todos.kumiki`) → content. Anything else (other files, sub-folders, the temp
 * files of an interrupted write) is not part of the tree. Refused, with nothing read: a layer
 * folder or definition file that is a symbolic link, and a file that is not UTF-8 (never read
 * with U+FFFD in place of what its author wrote).
 */
export function readTree(root: string): StoreResult<Map<string, string>> {
  const out = new Map<string, string>();
  const listings = layerListings(root);
  if (!listings.ok) return listings;
  for (const { dir, abs, entries } of listings.value) {
    for (const entry of entries) {
      if (!entry.isFile() || !entry.name.endsWith(DEFINITION_EXT)) continue;
      const file = path.join(abs, entry.name);
      let bytes: Uint8Array;
      try {
        bytes = fs.readFileSync(file);
      } catch (e) {
        return reject("tree-unreadable", `cannot read ${file}: ${(e as Error).message}`, { path: file });
      }
      try {
        out.set(`${dir}/${entry.name}`, strict.decode(bytes));
      } catch {
        const at = firstBadByte(bytes);
        return reject(
          "tree-unreadable",
          `${file} is not UTF-8 text (byte ${at} is 0x${bytes[at]!.toString(16).padStart(2, "0")}): a Kumiki text is UTF-8; convert it (e.g. iconv -f latin1 -t utf-8) and sync again; nothing was read or written`,
          { path: file, reason: "not-utf8", offset: at },
        );
      }
    }
  }
  return ok(out);
}

/**
 * Writes one file of the tree atomically (temp file, fsync, rename): a reader sees the old or the
 * new content. Throws (a bug: callers read the tree first, which refuses links) when its layer
 * folder is a symbolic link.
 */
export function writeTreeFile(root: string, treePath: string, content: string): void {
  const file = path.join(root, treePath);
  const folder = path.dirname(file);
  if (fs.existsSync(folder) && fs.lstatSync(folder).isSymbolicLink())
    throw new Error(`refusing to write through the symbolic link ${folder}`);
  makeDirs(path.dirname(file));
  writeFileAtomic(file, content);
}

/** Removes one file of the tree (a file already gone is fine). */
export function removeTreeFile(root: string, treePath: string): void {
  fs.rmSync(path.join(root, treePath), { force: true });
}
