/**
 * The strongly connected components of a graph of `count` vertices numbered 0…count-1, where
 * `edges[v]` lists the vertices `v` has an edge to. Tarjan's algorithm, iterative (a long
 * dependency chain must not overflow the stack), on typed arrays rather than maps. Components come
 * out in reverse topological order: every component after the ones it has edges to.
 */
export function stronglyConnected(count: number, edges: readonly (readonly number[])[]): number[][] {
  const UNVISITED = -1;
  const index = new Int32Array(count).fill(UNVISITED);
  const low = new Int32Array(count);
  const onStack = new Uint8Array(count);
  const stack: number[] = [];
  const components: number[][] = [];
  // The depth-first path: a vertex and how many of its edges have been followed.
  const path = new Int32Array(count);
  const next = new Int32Array(count);
  let counter = 0;

  for (let root = 0; root < count; root++) {
    if (index[root] !== UNVISITED) continue;
    let depth = 0;
    const open = (v: number): void => {
      index[v] = low[v] = counter++;
      stack.push(v);
      onStack[v] = 1;
      path[depth] = v;
      next[depth] = 0;
      depth++;
    };
    open(root);
    while (depth > 0) {
      const v = path[depth - 1]!;
      const out = edges[v]!;
      const i = next[depth - 1]!;
      if (i < out.length) {
        next[depth - 1] = i + 1;
        const w = out[i]!;
        if (index[w] === UNVISITED) open(w);
        else if (onStack[w] === 1) low[v] = Math.min(low[v]!, index[w]!);
        continue;
      }
      depth--;
      if (depth > 0) {
        const parent = path[depth - 1]!;
        low[parent] = Math.min(low[parent]!, low[v]!);
      }
      if (low[v] === index[v]) {
        const component: number[] = [];
        let w: number;
        do {
          w = stack.pop()!;
          onStack[w] = 0;
          component.push(w);
        } while (w !== v);
        components.push(component);
      }
    }
  }
  return components;
}
