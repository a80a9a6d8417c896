/**
 * The random `kumiki` calls the CLI's property tests make (the read fast path, the daemon): writes
 * by two agents to three slot names, a line appended to op-log.jsonl behind the store's back, and
 * the reads compared after each.
 */
import { appendFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";

/** A write by agent 0 or 1. */
export type WriteCall =
  | { readonly kind: "add" | "replace"; readonly agent: 0 | 1; readonly name: string; readonly value: number }
  | { readonly kind: "remove"; readonly agent: 0 | 1; readonly name: string };

/** A line appended to op-log.jsonl that the document does not hold ({@link tamperOpLog}). */
export interface TamperCall {
  readonly kind: "tamper";
}

export const AGENT = fc.constantFrom<0 | 1>(0, 1);
export const NAME = fc.constantFrom("alpha", "beta", "gamma");
export const VALUE = fc.nat({ max: 9 });

/** The author an agent writes as. */
export function authorOf(agent: 0 | 1): string {
  return agent === 0 ? "agent:a" : "agent:b";
}

/** The bin's arguments for a write. */
export function writeArgv(c: WriteCall): string[] {
  return c.kind === "add"
    ? ["add", "slot", c.name, `Int = ${c.value}`]
    : c.kind === "replace"
      ? ["replace", `slot.${c.name}`, `slot ${c.name} : Int = ${c.value}`]
      : ["remove", `slot.${c.name}`];
}

/** Behind the store's back: a line the document does not hold. Never to be served ("ghost"). */
export function tamperOpLog(dir: string): void {
  const line = { "op-id": "op_01JC0000000000000000000000", op: "add", layer: "slot", name: "ghost" };
  appendFileSync(path.join(dir, ".kumiki", "op-log.jsonl"), `${JSON.stringify(line)}\n`);
}

/** What a person or an agent reads after each call, through the real bin. */
export const READS: readonly (readonly string[])[] = [
  ["list", "--json"],
  ["status", "--json"],
  ["view", "slot.*"],
  ["export"],
  ["check", "--json"],
];
