import { describe, expect, it } from "vitest";
import { editDistance, nearestName } from "../../src/lang/similarity.js";

describe("did-you-mean", () => {
  it("counts an adjacent transposition as one edit", () => {
    expect(editDistance("usres", "users")).toBe(1);
    expect(editDistance("kitten", "sitting")).toBe(3);
    expect(editDistance("", "abc")).toBe(3);
    expect(editDistance("abcdef", "uvwxyz", 2)).toBe(3);
  });

  it("suggests the closest name within two edits or a quarter of the name", () => {
    expect(nearestName("usres", ["users", "user", "posts"])).toEqual({
      name: "users",
      similarity: 0.8,
      distance: 1,
    });
    expect(nearestName("saveTodo", ["saveTodos", "loadTodos"])?.name).toBe("saveTodos");
    expect(nearestName("notificationCentr", ["notificationCenter"])?.name).toBe("notificationCenter");
    expect(nearestName("abcdefghijkl", ["abxdxfxhijkl"])?.name).toBe("abxdxfxhijkl");
  });

  it("never suggests an unrelated short name, nor the name itself", () => {
    expect(nearestName("ab", ["xy"])).toBeUndefined();
    expect(nearestName("id", ["ix", "id"])).toBeUndefined();
    expect(nearestName("todos", ["filter", "draft"])).toBeUndefined();
  });

  it("does not depend on the order of the candidates", () => {
    const a = nearestName("todo", ["todos", "toda", "tod"]);
    const b = nearestName("todo", ["tod", "toda", "todos"]);
    expect(a).toEqual(b);
  });
});
