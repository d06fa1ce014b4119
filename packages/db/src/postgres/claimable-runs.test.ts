import { expect, test } from "bun:test";
import { addTenant, at, newRun, pushPrompt } from "@promptrun/core/testing";
import { describeOnPostgres } from "./describe-on-postgres.ts";
import { openPostgresStore } from "./open.ts";

await describeOnPostgres("listClaimable on Postgres", (database) => {
  test("a tenant at its lease limit with a deep backlog hides no other tenant's heads", async () => {
    const store = await openPostgresStore({ url: database().url, maxConnections: 4 });
    try {
      // Tenant ids are time-ordered: `before` and `after` sort on either side of `full`.
      const before = await addTenant(store, "before");
      const full = await addTenant(store, "full");
      const after = await addTenant(store, "after");
      const [beforeVersion, fullVersion, afterVersion] = await Promise.all(
        [before, full, after].map((tenant) => pushPrompt(store, tenant.id)),
      );
      // 600 channels of the full tenant fill every poll window, so the head scan runs.
      const backlog = Array.from({ length: 600 }, (_, index) =>
        newRun(fullVersion!, { createdAt: at(index / 100) }),
      );
      await Promise.all(backlog.map((run) => store.runs.create(run)));
      expect(await store.runs.claim(backlog[0]!.id, "a", at(100), at(10), { tenantLimit: 1 })).toBe(true);
      const beforeRun = newRun(beforeVersion!, { createdAt: at(20) });
      const afterRun = newRun(afterVersion!, { createdAt: at(21) });
      await store.runs.create(beforeRun);
      await store.runs.create(afterRun);

      const claimable = await store.runs.listClaimable(at(30), 4, { tenantLimit: 1 });
      expect(claimable.map((run) => run.id)).toEqual([beforeRun.id, afterRun.id]);
      // Without a limit the full tenant's heads are offered again.
      const unlimited = await store.runs.listClaimable(at(30), 4);
      expect(unlimited.map((run) => run.id)).toEqual([
        backlog[1]!.id,
        backlog[2]!.id,
        backlog[3]!.id,
        backlog[4]!.id,
      ]);
    } finally {
      await store.close();
    }
  });

  test("paused runs neither fill the poll window nor come out of the head scan", async () => {
    await database().truncate();
    const store = await openPostgresStore({ url: database().url, maxConnections: 4 });
    const pauseOf = (run: { id: string }) =>
      store.runs.pause(run.id, {
        steps: [],
        pause: {
          step: 0,
          requiredAction: { type: "submit_tool_outputs", toolCalls: [], expiresAt: at(900).toISOString() },
          expiresAt: at(900),
        },
        deliveries: [],
      });
    try {
      const tenant = await addTenant(store, "tools");
      const version = await pushPrompt(store, tenant.id);
      // 600 paused runs, each its own channel's head, older than everything else.
      const waiting = Array.from({ length: 600 }, (_, index) =>
        newRun(version, { createdAt: at(index / 100) }),
      );
      await Promise.all(waiting.map((run) => store.runs.create(run)));
      expect(await Promise.all(waiting.map(pauseOf))).toEqual(waiting.map(() => true));
      const fresh = newRun(version, { createdAt: at(10) });
      await store.runs.create(fresh);
      expect((await store.runs.listClaimable(at(20), 4)).map((run) => run.id)).toEqual([fresh.id]);

      // 300 runs queued behind a paused head fill the window, so the head scan runs: it finds
      // the other channel's head and leaves the paused one out.
      const threadId = Bun.randomUUIDv7();
      const channel = Array.from({ length: 300 }, (_, index) =>
        newRun(version, { threadId, createdAt: at(20 + index / 100) }),
      );
      await Promise.all(channel.map((run) => store.runs.create(run)));
      expect(await pauseOf(channel[0]!)).toBe(true);
      await store.runs.claim(fresh.id, "a", at(100), at(30));
      const later = newRun(version, { createdAt: at(40) });
      await store.runs.create(later);
      expect((await store.runs.listClaimable(at(50), 4)).map((run) => run.id)).toEqual([later.id]);
    } finally {
      await store.close();
    }
  }, 30_000);
});
