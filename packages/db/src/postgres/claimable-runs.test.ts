import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { addTenant, at, newRun, pushPrompt } from "@promptrun/core/testing";
import { openPostgresStore } from "./open.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./test-database.ts";

const available = await checkPostgres();

describe.skipIf(!available)("listClaimable on Postgres", () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database?.drop());

  test("a tenant at its lease limit with a deep backlog hides no other tenant's heads", async () => {
    const store = await openPostgresStore({ url: database.url, maxConnections: 4 });
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
});
