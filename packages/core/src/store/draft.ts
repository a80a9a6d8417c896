/** Authoring: each request of a write (add, replace, edit, rename, remove, link, unlink, revert, undo) drafted as ops against a fork of the graph, on the state and shared steps of draft-base.ts (see {@link Draft}). */

import type { z } from "zod";
import { qualified } from "../graph/materialize.js";
import { isLayer, LAYER_PLURALS, type Layer } from "../lang/layers.js";
import { defIdOf, type OpId } from "../ops/ids.js";
import { sameBindings } from "../ops/merge.js";
import { type Anchor, isDefinitionName, splitRefKey } from "../ops/op.js";
import { applyPatch, describePatchFailure } from "../ops/patch.js";
import { composeSource, decomposeSource } from "../ops/source.js";
import { DraftBase } from "./draft-base.js";
import { draftRevert, draftUndo } from "./draft-history.js";
import type { BundleItem, ReplaceInputSchema } from "./inputs.js";
import { type LinePatch, patchAnchors } from "./line-patch.js";
import { quoted, type Rejection } from "./result.js";
import type { TaskUndoPlan } from "./task-undo.js";

/**
 * The text a replace writes: `given`, with the lines that stood above the old text's keyword line
 * (its comments, and the blank lines an import kept there) unless `given` brings lines of its own
 * above its keyword. A replace changes a definition, not the comment that documents it.
 */
function keepLeadingComments(old: string, given: string): string {
  const oldHead = decomposeSource(old)?.head;
  if (oldHead === undefined) return given;
  const above = oldHead.slice(0, oldHead.lastIndexOf("\n") + 1);
  if (above === "") return given;
  const newHead = decomposeSource(given)?.head;
  if (newHead?.includes("\n") === true) return given;
  return above + given;
}

/**
 * Writes the ops of one write (one op, or a bundle) against a fork of the graph, each op applied to
 * the fork before the next is written, so each sees the ones before it.
 */
export class Draft extends DraftBase {
  item(item: BundleItem): Rejection | undefined {
    this.itemTask = item.task;
    const spec = this.specFieldsHold(item);
    if (spec !== undefined) return spec;
    switch (item.op) {
      case "add":
        return this.add(item);
      case "replace":
        return this.replace(item as z.output<typeof ReplaceInputSchema>);
      case "edit":
        return this.edit(item);
      case "rename":
        return this.rename(item);
      case "remove":
        return this.remove(item);
      case "link":
        return this.link(item);
      case "unlink":
        return this.unlink(item);
    }
  }

  /** An item's §9.3.2 fields: `author` is this store's, every `depends-on` entry still holds. */
  protected specFieldsHold(item: BundleItem): Rejection | undefined {
    if (item.author !== undefined && item.author !== this.author)
      return {
        code: "invalid-input",
        message: `the item says author ${item.author}, but this store writes as ${this.author}: open the store as ${item.author}, or leave author out`,
        details: { author: item.author, storeAuthor: this.author },
      };
    for (const entry of item["depends-on"] ?? []) {
      const at = entry.indexOf("@");
      const [layer, name] = entry.slice(0, at).split(":") as [string, string];
      const want = entry.slice(at + 1);
      const id = isLayer(layer) ? this.fork.lookup(layer, name) : undefined;
      const now = id === undefined ? undefined : this.reader.hash(id);
      if (now === want) continue;
      return {
        code: "dependency-changed",
        message:
          now === undefined
            ? `the item depends on ${layer}.${name}, which the graph no longer shows: view the program and write again`
            : `the item depends on ${layer}.${name} at ${want.slice(0, 14)}…, which is now ${now.slice(0, 14)}…: it changed since the item was written; view it and write again`,
        details: { dependency: entry, ...(now === undefined ? {} : { now }) },
      };
    }
    return undefined;
  }

  add(input: {
    layer?: string | undefined;
    name?: string | undefined;
    body?: string | undefined;
    source?: string | undefined;
    task?: string | undefined;
  }): Rejection | undefined {
    let layer: string;
    let name: string;
    let text: string;
    if (input.source !== undefined) {
      const parts = decomposeSource(input.source);
      if (parts === undefined) {
        return {
          code: "parse-error",
          message: "the source does not start with a layer keyword and a name (e.g. slot todos : …)",
          details: { text: input.source },
        };
      }
      if (
        (input.layer !== undefined && input.layer !== parts.layer) ||
        (input.name !== undefined && input.name !== parts.name)
      ) {
        return {
          code: "definition-mismatch",
          message: `the source defines ${qualified(parts.layer, parts.name)}, not ${input.layer}.${input.name}`,
        };
      }
      layer = parts.layer;
      name = parts.name;
      text = input.source;
    } else {
      layer = input.layer!;
      name = input.name!;
      if (!isLayer(layer)) {
        return {
          code: "invalid-layer",
          message: `unknown layer ${quoted(layer)}: one of type, slot, effect, reducer, tile, fn, app, test, theme, motion`,
        };
      }
      if (!isDefinitionName(name)) return this.badName(name);
      text = composeSource({ layer, name, body: input.body! });
    }
    if (!isLayer(layer)) return { code: "invalid-layer", message: `unknown layer ${quoted(layer)}` };
    if (!isDefinitionName(name)) return this.badName(name);
    const holder = this.fork.lookup(layer, name);
    // A faithful import keeps a program's second definition of a name (upstream: the later one
    // shows; both are kept, E0007 reports them); a name the graph held before is still refused.
    if (holder !== undefined && !(this.keepErrors && this.addedHere.has(holder))) {
      return {
        code: "duplicate-name",
        message: `${qualified(layer, name)} already exists (${holder}); replace or edit it, or rename it first`,
        details: { definition: qualified(layer, name), holder },
      };
    }
    const id = this.nextId();
    const bound = this.bind(text, { layer, name }, defIdOf(id));
    if (!bound.ok) return bound.error;
    this.addedHere.add(defIdOf(id));
    const parts = decomposeSource(text)!;
    return this.place({
      ...this.meta("add", layer, name, undefined, input.task, id),
      op: "add",
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: bound.value.refs,
    });
  }

  replace(input: {
    qname: string;
    body?: string | undefined;
    source?: string | undefined;
    task?: string | undefined;
  }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const given = input.source ?? composeSource({ layer: s.layer, name: s.name, body: input.body! });
    const text = keepLeadingComments(s.body.text, given);
    // The same text with the same bindings changes nothing: no op (a repeated replace is
    // idempotent). The same text that would bind differently (a name defined since) is a write.
    if (this.reserved.size === 0 && text === this.reader.materializer.render(s)) {
      const bound = this.bind(text, { layer: s.layer, name: s.name }, s.def);
      if (bound.ok && sameBindings(bound.value.refs, s.body.refs))
        return {
          code: "no-change",
          message: `${qualified(s.layer, s.name)} already has that text; nothing was written`,
          details: { definition: qualified(s.layer, s.name) },
        };
    }
    return this.writeText("replace", s, text, input.task);
  }

  edit(input: {
    qname: string;
    patch: readonly Anchor[] | LinePatch;
    task?: string | undefined;
  }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const shown = this.reader.materializer.render(s);
    const q = qualified(s.layer, s.name);
    const anchors = patchAnchors(shown, q, input.patch);
    if (!anchors.ok) return { ...anchors.failure, details: { definition: q, ...anchors.failure.details } };
    const patch = anchors.anchors;
    const r = applyPatch(shown, patch);
    if (!r.ok) {
      return {
        code: r.failure.code,
        message: `cannot edit ${q}: ${describePatchFailure(r.failure)}; nothing was changed (view ${q} for its current text)`,
        details: { definition: q, ...r.failure },
      };
    }
    const bound = this.bind(r.text, { layer: s.layer, name: s.name }, s.def);
    if (!bound.ok) return { ...bound.error, message: `after the edit, ${bound.error.message}` };
    // An edit whose anchors replace each text with itself changes nothing: no op, as for replace.
    if (this.reserved.size === 0 && r.text === shown && sameBindings(bound.value.refs, s.body.refs)) {
      return {
        code: "no-change",
        message: `the edit leaves ${q} as it is (every replace equals its find); nothing was written`,
        details: { definition: q },
      };
    }
    const parts = decomposeSource(r.text)!;
    return this.place({
      ...this.meta("edit", s.layer, s.name, s.def, input.task),
      op: "edit",
      patch: patch.map((a) => ({ find: a.find, replace: a.replace })),
      base: s.body.version,
      body: parts.body,
      ...(parts.head === undefined ? {} : { head: parts.head }),
      refs: bound.value.refs,
    });
  }

  rename(
    input: { qname: string; newName: string; task?: string | undefined },
    reverts?: OpId,
  ): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    if (!isDefinitionName(input.newName)) return this.badName(input.newName);
    if (input.newName === s.name)
      return { code: "no-change", message: `${qualified(s.layer, s.name)} already has that name` };
    const holder = this.fork.lookup(s.layer, input.newName);
    if (holder !== undefined) {
      return {
        code: "duplicate-name",
        message: `${qualified(s.layer, input.newName)} already exists (${holder}); rename or remove it first`,
        details: { definition: qualified(s.layer, input.newName), holder },
      };
    }
    return this.place({
      ...this.meta("rename", s.layer, s.name, s.def, input.task),
      op: "rename",
      "new-name": input.newName,
      ...(reverts === undefined ? {} : { reverts }),
    });
  }

  remove(
    input: {
      qname: string;
      task?: string | undefined;
      cascade?: boolean | undefined;
      force?: boolean | undefined;
    },
    reverts?: OpId,
  ): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const q = this.fork.label(s.def);
    if (input.cascade === true) return this.removeAll(this.referrerClosure([s.def]), input.task, []);
    // Pre-check at issue time (ai-edit.md §9.4.1).
    const referrers = this.reader.referrers(s.def);
    if (referrers.length > 0 && input.force === true) {
      for (const r of referrers)
        for (const line of r.lines)
          this.warnings.push(
            `${r.view.visible ? r.view.qname : r.view.def}:${line} references ${q}, which is removed: the reference is left dangling (a forced remove)`,
          );
      this.forced = true;
      this.removed.push(q);
      return this.place({
        ...this.meta("remove", s.layer, s.name, s.def, input.task),
        op: "remove",
        force: true,
        ...(reverts === undefined ? {} : { reverts }),
      });
    }
    if (referrers.length > 0) {
      const byLayer = new Map<Layer, number>();
      for (const r of referrers) byLayer.set(r.view.layer, (byLayer.get(r.view.layer) ?? 0) + 1);
      const counts = [...byLayer].map(([l, n]) => `${n} ${n === 1 ? l : LAYER_PLURALS[l]}`).join(", ");
      const lines = referrers.flatMap((r) =>
        r.lines.map((line) => `${r.view.visible ? r.view.qname : r.view.def}:${line}`),
      );
      // The remedy is the message's last line, also in details, so that an edge can say it in its
      // own terms (the CLI's --cascade / --force, MCP's cascade argument).
      const remedy =
        "remove it with cascade to remove all dependents too, or with force to leave their references dangling";
      return {
        code: "referenced",
        message: `cannot remove ${q} (referenced by ${counts})\n${lines.map((l) => `  ${l}`).join("\n")}\n${remedy}`,
        details: {
          remedy,
          definition: q,
          referrers: referrers.map((r) => ({ qname: r.view.qname, def: r.view.def, lines: r.lines })),
          byLayer: Object.fromEntries(byLayer),
        },
      };
    }
    this.removed.push(q);
    return this.place({
      ...this.meta("remove", s.layer, s.name, s.def, input.task),
      op: "remove",
      ...(reverts === undefined ? {} : { reverts }),
    });
  }

  link(input: { qname: string; ref: string; to: string; task?: string | undefined }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const keys = this.keysShownAs(s, input.ref);
    if (!keys.ok) return keys.error;
    if (keys.value.length > 1) {
      return {
        code: "invalid-ref",
        message: `${input.ref} stands for several references in ${qualified(s.layer, s.name)}; edit the text instead`,
      };
    }
    const { key } = keys.value[0]!;
    const to = this.target(input.to);
    if (!to.ok) return to.error;
    if (to.value.layer !== splitRefKey(key).layer) {
      return {
        code: "invalid-ref",
        message: `${input.ref} references a ${splitRefKey(key).layer}; ${this.fork.label(to.value.def)} is a ${to.value.layer}`,
      };
    }
    if (s.body.refs[key] === to.value.def)
      return {
        code: "no-change",
        message: `${input.ref} already refers to ${this.fork.label(to.value.def)}`,
      };
    return this.place({
      ...this.meta("link", s.layer, s.name, s.def, input.task),
      op: "link",
      ref: key,
      target: to.value.def,
    });
  }

  unlink(input: { qname: string; ref: string; task?: string | undefined }): Rejection | undefined {
    const t = this.target(input.qname);
    if (!t.ok) return t.error;
    const s = t.value;
    const keys = this.keysShownAs(s, input.ref);
    if (!keys.ok) return keys.error;
    const bound = keys.value.filter((k) => k.bound);
    if (bound.length === 0)
      return {
        code: "no-change",
        message: `${input.ref} in ${qualified(s.layer, s.name)} is not bound to a definition`,
      };
    if (bound.length > 1) {
      return {
        code: "invalid-ref",
        message: `${input.ref} stands for several references in ${qualified(s.layer, s.name)}; edit the text instead`,
      };
    }
    return this.place({
      ...this.meta("unlink", s.layer, s.name, s.def, input.task),
      op: "unlink",
      ref: bound[0]!.key,
    });
  }

  /** Drafts the revert of `opId` (draft-history.ts). */
  revert(opId: OpId, task: string | undefined): Rejection | undefined {
    return draftRevert(this, opId, task);
  }

  /** Drafts the undo of a task by `plan` (draft-history.ts). */
  undo(plan: TaskUndoPlan, task: string): Rejection | undefined {
    return draftUndo(this, plan, task);
  }
}
