import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { stronglyConnected } from "../../src/lang/scc.js";

/** Which vertices each vertex reaches (itself included), by breadth-first search. */
function reachability(count: number, edges: readonly (readonly number[])[]): boolean[][] {
  return Array.from({ length: count }, (_, start) => {
    const seen = Array<boolean>(count).fill(false);
    const queue = [start];
    seen[start] = true;
    while (queue.length > 0) {
      for (const w of edges[queue.shift()!]!) {
        if (!seen[w]) {
          seen[w] = true;
          queue.push(w);
        }
      }
    }
    return seen;
  });
}

const graph = fc.integer({ min: 0, max: 30 }).chain((count) =>
  fc.tuple(
    fc.constant(count),
    fc.array(
      count === 0
        ? fc.constant<number[]>([])
        : fc.array(fc.integer({ min: 0, max: count - 1 }), { maxLength: 4 }),
      {
        minLength: count,
        maxLength: count,
      },
    ),
  ),
);

describe("stronglyConnected", () => {
  it("partitions the vertices into mutually reachable sets, dependencies first", () => {
    fc.assert(
      fc.property(graph, ([count, edges]) => {
        const components = stronglyConnected(count, edges);
        const componentOf = Array<number>(count).fill(-1);
        components.forEach((c, i) => {
          for (const v of c) {
            expect(componentOf[v]).toBe(-1);
            componentOf[v] = i;
          }
        });
        expect(componentOf.every((c) => c >= 0)).toBe(true);
        const reaches = reachability(count, edges);
        const wrong: string[] = [];
        for (let a = 0; a < count; a++) {
          for (let b = 0; b < count; b++) {
            const mutual = reaches[a]![b]! && reaches[b]![a]!;
            if ((componentOf[a] === componentOf[b]) !== mutual) wrong.push(`${a} and ${b}`);
          }
          // Reverse topological order: what a vertex has an edge to comes out no later than it.
          for (const b of edges[a]!) if (componentOf[b]! > componentOf[a]!) wrong.push(`edge ${a}→${b}`);
        }
        expect(wrong).toEqual([]);
      }),
      { numRuns: 300 },
    );
  });

  it("follows a chain far longer than the call stack allows recursion", () => {
    const count = 200_000;
    const edges = Array.from({ length: count }, (_, i) => (i + 1 < count ? [i + 1] : [0]));
    const components = stronglyConnected(count, edges);
    expect(components).toHaveLength(1);
    expect(components[0]).toHaveLength(count);
  });
});
