/**
 * Repairs that several diagnostics share, offered once. An app missing `storage.write` has an
 * E0301 at every emit of every effect that needs it (apps/05 with one capability dropped: 21),
 * and each used to carry its own "add storage.write" patch: applied together — one bundle, the
 * §9.6.2 loop over one check, `kumiki_apply` of every proposal — they added the capability once
 * per diagnostic, and the program then checked clean with `caps = [… storage.write,
 * storage.write, …]`. Now the first E0301 of an app (in diagnostic order) carries the one patch that
 * adds every capability the app lacks; the others carry none and name it in `shares-patch-of`.
 */
import type { AutoPatch, Diagnostic } from "./diagnostic.js";
import type { CheckInput } from "./graph.js";
import { appendCapsPatch } from "./patch.js";

/** What an E0301 diagnostic needs before its repair is shared: a capability of an app. */
export interface CapabilityNeed {
  /** The app whose `caps` lacks it (its identity: the app as the graph holds it when collected). */
  readonly app: string;
  readonly cap: string;
}

/**
 * `diagnostics` (sorted) with each app's E0301 repairs made one: the first diagnostic of the app
 * carries the patch adding every missing capability (in order of first need), the others
 * `shares-patch-of` its location. Diagnostics are copied, never changed (the checker keeps them).
 */
export function shareCapabilityPatches(
  diagnostics: readonly Diagnostic[],
  needs: ReadonlyMap<Diagnostic, CapabilityNeed>,
  appOf: (id: string) => CheckInput | undefined,
): Diagnostic[] {
  if (needs.size === 0) return [...diagnostics];
  const groups = new Map<string, { first: Diagnostic; caps: string[] }>();
  for (const d of diagnostics) {
    const need = needs.get(d);
    if (need === undefined) continue;
    const g = groups.get(need.app);
    if (g === undefined) groups.set(need.app, { first: d, caps: [need.cap] });
    else if (!g.caps.includes(need.cap)) g.caps.push(need.cap);
  }
  const patches = new Map<string, AutoPatch | undefined>();
  for (const [id, g] of groups) {
    const app = appOf(id);
    patches.set(id, app === undefined ? undefined : appendCapsPatch(app, g.caps));
  }
  return diagnostics.map((d) => {
    const need = needs.get(d);
    if (need === undefined) return d;
    const patch = patches.get(need.app);
    if (patch === undefined) return d;
    const first = groups.get(need.app)!.first;
    const { definition, span, ...head } = d;
    const shared = d === first ? { "auto-patch": patch } : { "shares-patch-of": first.location };
    return {
      ...head,
      ...shared,
      ...(definition === undefined ? {} : { definition }),
      ...(span === undefined ? {} : { span }),
    };
  });
}
