import { describe, expect, test } from "bun:test";
import { createGroupCommit, type WriteOutcome } from "./group-commit.ts";

/** A commit function whose batches stay open until the test releases them. */
const controlledCommit = () => {
  const batches: number[][] = [];
  const releases: Array<() => void> = [];
  let open = 0;
  let mostOpen = 0;
  const commit = async (batch: number[]): Promise<WriteOutcome<number>[]> => {
    batches.push(batch);
    open++;
    mostOpen = Math.max(mostOpen, open);
    await new Promise<void>((resolve) => releases.push(resolve));
    open--;
    return batch.map((value) =>
      value < 0 ? { ok: false, error: new Error(`negative ${value}`) } : { ok: true, value: value * 10 },
    );
  };
  const releaseAll = () => {
    for (const release of releases.splice(0)) release();
  };
  return { commit, batches, releaseAll, mostOpen: () => mostOpen };
};

const nextTurn = () => new Promise((resolve) => setImmediate(resolve));

describe("postgres group commit", () => {
  test("writes submitted in one turn share a batch; each gets its own outcome", async () => {
    const control = controlledCommit();
    const sizes: number[] = [];
    const group = createGroupCommit({ commit: control.commit, onCommit: (size) => sizes.push(size) });
    const results = Promise.allSettled([1, 2, -3, 4].map((value) => group.submit(value)));
    await nextTurn();
    expect(control.batches).toEqual([[1, 2, -3, 4]]);
    control.releaseAll();
    const settled = await results;
    expect(settled.map((result) => (result.status === "fulfilled" ? result.value : "rejected"))).toEqual([
      10,
      20,
      "rejected",
      40,
    ]);
    expect(sizes).toEqual([4]);
  });

  test("splits at maxBatch, keeps at most maxInFlight batches open, and batches what waits", async () => {
    const control = controlledCommit();
    const group = createGroupCommit({ commit: control.commit, maxBatch: 3, maxInFlight: 2 });
    const first = Array.from({ length: 7 }, (_, index) => group.submit(index));
    await nextTurn();
    // 7 writes: two batches of 3 open; the 7th waits for a free slot.
    expect(control.batches).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    const later = [group.submit(100), group.submit(101)];
    await nextTurn();
    expect(control.batches).toHaveLength(2);
    control.releaseAll();
    await Promise.all(first.slice(0, 6));
    await nextTurn();
    // The waiting writes went out together once slots were free.
    expect(control.batches.slice(2)).toEqual([[6, 100, 101]]);
    control.releaseAll();
    expect(await Promise.all([...first, ...later])).toEqual([0, 10, 20, 30, 40, 50, 60, 1000, 1010]);
    expect(control.mostOpen()).toBe(2);
  });

  test("a batch that throws rejects every write of it, and later batches still run", async () => {
    let calls = 0;
    const group = createGroupCommit<number, number>({
      commit: async (batch) => {
        calls++;
        if (calls === 1) throw new Error("connection lost");
        return batch.map((value) => ({ ok: true, value }));
      },
    });
    const failed = await Promise.allSettled([group.submit(1), group.submit(2)]);
    expect(failed.map((result) => result.status)).toEqual(["rejected", "rejected"]);
    expect(await group.submit(3)).toBe(3);
  });

  test("close waits for queued and open batches, then refuses new writes as unavailable", async () => {
    const control = controlledCommit();
    const group = createGroupCommit({ commit: control.commit, maxBatch: 1, maxInFlight: 1 });
    const queued = [group.submit(1), group.submit(2)];
    let closed = false;
    const closing = group.close().then(() => {
      closed = true;
    });
    await expect(group.submit(3)).rejects.toMatchObject({ code: "unavailable" });
    for (let turn = 0; turn < 4 && !closed; turn++) {
      control.releaseAll();
      await nextTurn();
    }
    await closing;
    expect(await Promise.all(queued)).toEqual([10, 20]);
    expect(closed).toBe(true);
    await expect(group.close()).resolves.toBeUndefined();
  });
});
