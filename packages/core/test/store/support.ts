import { expect } from "vitest";
import { openStore } from "../../src/integrity/checked-store.js";
import type { StoreResult } from "../../src/store/result.js";
import type { Store } from "../../src/store/store.js";
import type { WriteReceipt } from "../../src/store/store-types.js";
import { TestLog } from "../ops/memory-log.js";

let clock = 1_779_884_546_000;

/** A store over a fresh (or given) test log, with a clock that ticks once per call. */
export function newStore(log = new TestLog(), author = "agent:a"): { store: Store; log: TestLog } {
  const r = openStore({ log, author, now: () => clock++ });
  if (!r.ok) throw new Error(r.error.message);
  return { store: r.value, log };
}

export function okValue<T>(r: StoreResult<T>): T {
  if (!r.ok) throw new Error(`${r.error.code}: ${r.error.message}`);
  return r.value;
}

export async function must(p: Promise<StoreResult<WriteReceipt>>): Promise<WriteReceipt> {
  return okValue(await p);
}

/** A definition's text as `view` shows it. */
export function text(store: Store, selector: string): string {
  return okValue(store.view(selector)).text;
}

/** Asserts a write was refused with `code` and left the log exactly as it was; returns the rejection. */
export async function refused(
  log: TestLog,
  p: Promise<StoreResult<WriteReceipt>>,
  code: string,
): Promise<{ code: string; message: string; details?: Readonly<Record<string, unknown>> }> {
  const before = JSON.stringify(log.all());
  const appends = log.appends;
  const r = await p;
  expect(r.ok, r.ok ? "accepted" : r.error.message).toBe(false);
  if (r.ok) throw new Error("accepted");
  expect(r.error.code, r.error.message).toBe(code);
  expect(JSON.stringify(log.all())).toBe(before);
  expect(log.appends).toBe(appends);
  return r.error;
}

/** The small program of the spec's examples: a draft slot and what references it. */
export async function draftProgram(store: Store): Promise<void> {
  await must(
    store.apply([
      { op: "add", layer: "slot", name: "draft", body: 'Text = ""' },
      { op: "add", layer: "slot", name: "todos", body: "List(Text) = []" },
      { op: "add", layer: "tile", name: "Compose", body: "column(input(bind=draft), text(draft))" },
      { op: "add", layer: "tile", name: "Counter", body: "text(todos.size.show)" },
      { op: "add", layer: "tile", name: "Page", body: "column(Compose, Counter)" },
    ]),
  );
}

/** Two replicas of one graph (A seeded by `seed`), and a function that exchanges every op both ways. */
export async function replicas(seed: (s: Store) => Promise<void> = async () => {}) {
  const a = newStore(new TestLog(), "agent:a");
  await seed(a.store);
  const b = newStore(new TestLog(), "agent:b");
  b.log.deliver(a.log.all());
  await b.store.ingest([]);
  const exchange = async () => {
    const fromA = a.log.all();
    const fromB = b.log.all();
    a.log.deliver(fromB);
    b.log.deliver(fromA);
    await a.store.ingest([]);
    await b.store.ingest([]);
  };
  return { a: a.store, b: b.store, logA: a.log, logB: b.log, exchange };
}

/** Everything a replica shows, to compare replicas. */
export function observe(s: Store): unknown {
  const reader = s.read();
  return {
    program: reader.program(),
    hashes: reader.definitions().map((d) => [d.def, d.qname, reader.hash(d.def)]),
    conflicts: s.conflicts(),
    policy: s.conflictPolicy(),
    locks: s.locks(),
  };
}
