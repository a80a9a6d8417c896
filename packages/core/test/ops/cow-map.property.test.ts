/**
 * A copy-on-write map behaves as a plain map copied at each fork, whatever is written before and
 * after the fork: a fork's writes (lists appended to in place included) never reach its base until
 * committed, a dropped fork leaves the base as it was, and a commit leaves exactly the fork's view.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { appendToList, CowMap } from "../../src/ops/cow-map.js";

type Step =
  | { readonly kind: "set"; readonly key: string; readonly value: number }
  | { readonly kind: "delete"; readonly key: string }
  | { readonly kind: "append"; readonly key: string; readonly value: number };

const key = fc.constantFrom("a", "b", "c", "d");
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constant("set" as const), key, value: fc.nat(99) }),
  fc.record({ kind: fc.constant("delete" as const), key }),
  fc.record({ kind: fc.constant("append" as const), key, value: fc.nat(99) }),
);

function apply(map: CowMap<string, readonly number[]>, model: Map<string, number[]>, s: Step): void {
  if (s.kind === "set") {
    map.set(s.key, [s.value]);
    model.set(s.key, [s.value]);
  } else if (s.kind === "delete") {
    map.delete(s.key);
    model.delete(s.key);
  } else {
    appendToList(map, s.key, s.value);
    model.set(s.key, [...(model.get(s.key) ?? []), s.value]);
  }
}

/** The map's entries, sorted; its callback walks (`forEach`, `peekEach`) give the same ones. */
function view(map: CowMap<string, readonly number[]>): Record<string, readonly number[]> {
  const out: Record<string, readonly number[]> = {};
  for (const [k, v] of map.entries()) out[k] = [...v];
  const walked: [string, readonly number[]][] = [];
  map.forEach((v, k) => {
    walked.push([k, v]);
  });
  const peeked: [string, readonly number[] | undefined][] = [];
  map.peekEach((k, v) => {
    peeked.push([k, v]);
  });
  expect(walked).toEqual([...map.entries()]);
  expect(peeked).toEqual(walked);
  return Object.fromEntries(Object.entries(out).sort(([a], [b]) => (a < b ? -1 : 1)));
}

function plain(model: Map<string, number[]>): Record<string, readonly number[]> {
  return Object.fromEntries([...model].sort(([a], [b]) => (a < b ? -1 : 1)));
}

describe("CowMap", () => {
  it("reads as a plain map copied at the fork; a fork's writes reach the base only by commit", () => {
    fc.assert(
      fc.property(
        fc.array(step, { maxLength: 12 }),
        fc.array(step, { maxLength: 12 }),
        fc.array(step, { maxLength: 6 }),
        fc.boolean(),
        (before, inFork, inSecondFork, commit) => {
          const base = new CowMap<string, readonly number[]>();
          const model = new Map<string, number[]>();
          for (const s of before) apply(base, model, s);
          expect(view(base)).toEqual(plain(model));
          const atFork = plain(model);
          const fork = base.fork();
          const forkModel = new Map([...model].map(([k, v]) => [k, [...v]]));
          for (const s of inFork) apply(fork, forkModel, s);
          expect(view(fork)).toEqual(plain(forkModel));
          for (const k of ["a", "b", "c", "d"]) expect(fork.get(k)).toEqual(forkModel.get(k));
          // A second fork of the fork: its writes stay its own too.
          const second = fork.fork();
          const secondModel = new Map([...forkModel].map(([k, v]) => [k, [...v]]));
          for (const s of inSecondFork) apply(second, secondModel, s);
          expect(view(second)).toEqual(plain(secondModel));
          expect(view(fork)).toEqual(plain(forkModel));
          expect(view(base)).toEqual(atFork);
          if (commit) {
            fork.commit();
            expect(view(base)).toEqual(plain(forkModel));
            expect(base.size).toBe(forkModel.size);
          } else expect(view(base)).toEqual(atFork);
        },
      ),
      { numRuns: 500 },
    );
  });

  it("appends in place only where no live fork reads the list", () => {
    const base = new CowMap<string, readonly number[]>();
    appendToList(base, "a", 1);
    const list = base.get("a");
    appendToList(base, "a", 2);
    // No fork: the same list, grown.
    expect(base.get("a")).toBe(list);
    expect(list).toEqual([1, 2]);
    const fork = base.fork();
    appendToList(fork, "a", 3);
    expect(base.get("a")).toEqual([1, 2]);
    expect(fork.get("a")).toEqual([1, 2, 3]);
    // While the fork lives, the base replaces its lists: what the fork read through stays as read.
    appendToList(base, "a", 4);
    expect(base.get("a")).not.toBe(list);
    expect(list).toEqual([1, 2]);
    // Dropped (twice: counted once), the fork no longer holds the base back.
    fork.drop();
    fork.drop();
    const now = base.get("a");
    appendToList(base, "a", 5);
    expect(base.get("a")).toBe(now);
    expect(now).toEqual([1, 2, 4, 5]);
    // A committed fork alike; another fork still live keeps the base copying.
    const committed = base.fork();
    const live = base.fork();
    appendToList(committed, "a", 6);
    committed.commit();
    const after = base.get("a");
    appendToList(base, "a", 7);
    expect(base.get("a")).not.toBe(after);
    expect(live.get("a")).toEqual([1, 2, 4, 5, 6, 7]);
    live.drop();
    const last = base.get("a");
    appendToList(base, "a", 8);
    expect(base.get("a")).toBe(last);
  });
});
