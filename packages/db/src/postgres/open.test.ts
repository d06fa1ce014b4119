import { afterAll, afterEach, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { RunCompletion, Store } from "@promptrun/core";
import { addTenant, at, idempotencyFor, newRun, push, pushPrompt } from "@promptrun/core/testing";
import { POSTGRES_MIGRATIONS_FOLDER } from "./migrate.ts";
import { openPostgresStore, type PostgresStore } from "./open.ts";
import { checkPostgres, createTestDatabase, type TestDatabase } from "./test-database.ts";

const available = await checkPostgres();

const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };

const journalEntries = (): number =>
  (
    JSON.parse(readFileSync(join(POSTGRES_MIGRATIONS_FOLDER, "meta", "_journal.json"), "utf8")) as {
      entries: unknown[];
    }
  ).entries.length;

const appliedMigrations = async (store: PostgresStore): Promise<number> => {
  const [row] = await store.client<
    { n: number }[]
  >`SELECT count(*)::int AS n FROM drizzle.__drizzle_migrations`;
  return row?.n ?? -1;
};

describe.skipIf(!available)("openPostgresStore", () => {
  let database: TestDatabase;
  const opened: Store[] = [];
  const open = async (options: { maxConnections?: number; onCreateBatch?: (size: number) => void } = {}) => {
    const store = await openPostgresStore({ url: database.url, ...options });
    opened.push(store);
    return store;
  };

  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(async () => {
    await Promise.all(opened.splice(0).map((store) => store.close()));
    await database.truncate();
  });
  afterAll(() => database?.drop());

  test("instances starting at once on a fresh database apply the migrations exactly once", async () => {
    const stores = await Promise.all(Array.from({ length: 4 }, () => open({ maxConnections: 2 })));
    expect(await appliedMigrations(stores[0]!)).toBe(journalEntries());
    const tenant = await addTenant(stores[1]!);
    expect(await stores[3]!.tenants.get(tenant.id)).toEqual(tenant);
    // Re-opening applies nothing twice.
    const again = await open();
    expect(await appliedMigrations(again)).toBe(journalEntries());
  });

  test("the schema keeps byte-order text, json documents and millisecond timestamps", async () => {
    const store = await open();
    const columns = await store.client<{ column: string; type: string; collation: string | null }[]>`
      SELECT column_name AS column, data_type AS type, collation_name AS collation
      FROM information_schema.columns
      WHERE table_schema = 'public' AND table_name = 'runs' AND column_name IN ('id', 'metadata', 'created_at')
      ORDER BY column_name`;
    expect([...columns]).toEqual([
      { column: "created_at", type: "timestamp with time zone", collation: null },
      { column: "id", type: "text", collation: "C" },
      { column: "metadata", type: "json", collation: null },
    ]);
  });

  test("100 creates of one turn are committed as one transaction", async () => {
    const sizes: number[] = [];
    const store = await open({ onCreateBatch: (size) => sizes.push(size) });
    const tenant = await addTenant(store);
    const version = await pushPrompt(store, tenant.id);
    await Promise.all(Array.from({ length: 100 }, () => store.runs.create(newRun(version))));
    expect(sizes).toEqual([100]);
    // Rows written by one transaction share its id (xmin).
    const [row] = await store.client<{ transactions: number; runs: number }[]>`
      SELECT count(DISTINCT xmin::text)::int AS transactions, count(*)::int AS runs FROM runs`;
    expect(row).toEqual({ transactions: 1, runs: 100 });
  });

  test("two instances serialize pushes of one slug and never end a run twice", async () => {
    const [first, second] = await Promise.all([open(), open()]);
    const tenant = await addTenant(first!);
    const pushes = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        push(index % 2 === 0 ? first! : second!, tenant.id, "shared", `t${index}`),
      ),
    );
    expect(pushes.map((result) => result.version.version).sort((a, b) => a - b)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
    ]);

    const version = pushes[0]!.version;
    for (let round = 0; round < 5; round++) {
      const run = newRun(version);
      await first!.runs.create(run);
      const completion = (output: string): RunCompletion => ({
        output,
        tokenUsage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
        cost: { success: zeroBlock, retries: zeroBlock, total: 0 },
        finishedAt: at(5),
        memory: [{ role: "assistant", content: output }],
        deliveries: [],
        steps: [],
      });
      const outcomes = await Promise.all([
        first!.runs.complete(run.id, completion("one")),
        second!.runs.fail(run.id, { error: "two", cost: null, finishedAt: at(5), deliveries: [] }),
        second!.runs.complete(run.id, completion("three")),
      ]);
      expect(outcomes.filter(Boolean)).toHaveLength(1);
      const { messages: memory } = await first!.runs.memory(tenant.id, run.threadId, "default");
      const stored = await second!.runs.getById(run.id);
      if (outcomes[1]) {
        expect(stored).toMatchObject({ status: "failed", error: "two" });
        expect(memory).toEqual([]);
      } else {
        const output = outcomes[0] ? "one" : "three";
        expect(stored).toMatchObject({ status: "completed", output });
        expect(memory).toEqual([{ role: "assistant", content: output }]);
      }
    }
  });

  test("two instances racing for one idempotency key: exactly one run is created", async () => {
    const [first, second] = await Promise.all([open(), open()]);
    const tenant = await addTenant(first!);
    const version = await pushPrompt(first!, tenant.id);
    const runs = Array.from({ length: 6 }, () => newRun(version));
    const results = await Promise.allSettled(
      runs.map((run, index) =>
        (index % 2 === 0 ? first! : second!).runs.create(run, idempotencyFor(run, "raced")),
      ),
    );
    expect(results.filter((result) => result.status === "fulfilled")).toHaveLength(1);
    const winner = runs[results.findIndex((result) => result.status === "fulfilled")]!;
    expect((await second!.runs.findIdempotency(tenant.id, "raced", at(-1)))?.runId).toBe(winner.id);
    expect(await first!.runs.countPending(tenant.id)).toBe(1);
  });

  test("a deleted webhook's secret is erased from its row", async () => {
    const store = await open();
    const tenant = await addTenant(store);
    const environment = await store.environments.ensure(tenant.id, "production", Bun.randomUUIDv7(), at(0));
    const id = Bun.randomUUIDv7();
    await store.webhooks.create({
      id,
      tenantId: tenant.id,
      environmentId: environment.id,
      environment: environment.name,
      url: "https://example.com/hook",
      encryptedSecret: "encrypted-whsec",
      events: ["run.completed"],
      enabled: true,
      failureStreak: 0,
      createdAt: at(0),
    });
    expect(await store.webhooks.delete(tenant.id, id)).toBe(true);
    const [row] = await store.client<{ secret: string; deleted: boolean }[]>`
      SELECT encrypted_secret AS secret, deleted_at IS NOT NULL AS deleted FROM webhooks WHERE id = ${id}`;
    expect(row).toEqual({ secret: "", deleted: true });
  });

  test("an unreachable server fails the open instead of hanging", async () => {
    await expect(openPostgresStore({ url: "postgres://postgres@127.0.0.1:1/nowhere" })).rejects.toThrow();
  });
});
