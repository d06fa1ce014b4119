import { describe, expect, test } from "bun:test";
import { createReadCache } from "./read-cache.ts";

const countingLoader = (values: Map<string, string>) => {
  const loads: string[] = [];
  const load = (key: string) => async () => {
    loads.push(key);
    return values.get(key) ?? null;
  };
  return { loads, load };
};

describe("createReadCache", () => {
  test("remembers found values until the TTL, never misses; immutable ones do not expire", async () => {
    let now = 0;
    const cache = createReadCache<string>({ maxEntries: 10, ttlMs: 1_000, now: () => now });
    const values = new Map([
      ["a", "A"],
      ["b", "B"],
    ]);
    const { loads, load } = countingLoader(values);
    expect(await cache.get("a", load("a"))).toBe("A");
    expect(await cache.get("b", load("b"), { immutable: true })).toBe("B");
    expect(await cache.get("none", load("none"))).toBeNull();
    expect(await cache.get("none", load("none"))).toBeNull();
    values.set("a", "A2");
    now = 999;
    expect(await cache.get("a", load("a"))).toBe("A");
    now = 1_000;
    expect(await cache.get("a", load("a"))).toBe("A2");
    now = 1_000_000;
    expect(await cache.get("b", load("b"), { immutable: true })).toBe("B");
    expect(loads).toEqual(["a", "b", "none", "none", "a"]);
  });

  test("clear() forgets everything, and a load that overlapped it is returned but not kept", async () => {
    const cache = createReadCache<string>({ maxEntries: 10, ttlMs: 60_000 });
    const { loads, load } = countingLoader(new Map([["a", "A"]]));
    await cache.get("a", load("a"), { immutable: true });
    cache.clear();
    let release = () => {};
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const overlapping = cache.get("a", async () => {
      loads.push("slow a");
      await gate;
      return "stale A";
    });
    cache.clear();
    release();
    expect(await overlapping).toBe("stale A");
    expect(await cache.get("a", load("a"))).toBe("A");
    expect(loads).toEqual(["a", "slow a", "a"]);
  });

  test("keeps at most maxEntries, evicting the oldest", async () => {
    const cache = createReadCache<string>({ maxEntries: 2, ttlMs: 60_000 });
    const { loads, load } = countingLoader(
      new Map([
        ["a", "A"],
        ["b", "B"],
        ["c", "C"],
      ]),
    );
    for (const key of ["a", "b", "c", "b", "c", "a"]) await cache.get(key, load(key));
    expect(loads).toEqual(["a", "b", "c", "a"]);
  });
});
