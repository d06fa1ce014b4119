/**
 * Measures runs.create throughput on Postgres (a throwaway database on the test server),
 * group-committed vs one commit per run: `bun src/postgres/measure-create.ts [runs]`.
 * Not a test: figures vary by machine. Needs PROMPTRUN_TEST_POSTGRES_URL's server.
 */
import { addTenant, idempotencyFor, newRun, pushPrompt } from "@promptrun/core/testing";
import { openPostgresStore } from "./open.ts";
import { createTestDatabase } from "./test-database.ts";

const total = Number(process.argv[2] ?? 20_000);

const measure = async (
  label: string,
  options: { maxBatch: number; maxConcurrentBatches: number; perTurn: number; idempotency?: boolean },
) => {
  const database = await createTestDatabase();
  const batches: number[] = [];
  const store = await openPostgresStore({
    url: database.url,
    maxBatch: options.maxBatch,
    maxConcurrentBatches: options.maxConcurrentBatches,
    onCreateBatch: (size) => batches.push(size),
  });
  const tenant = await addTenant(store);
  const version = await pushPrompt(store, tenant.id);
  const threadId = Bun.randomUUIDv7();
  const started = performance.now();
  const pending: Promise<void>[] = [];
  for (let issued = 0; issued < total; ) {
    // Requests arriving over event-loop turns, `perTurn` at a time.
    for (let index = 0; index < options.perTurn && issued < total; index++, issued++) {
      const run = newRun(version, {
        threadId: issued % 2 === 0 ? threadId : Bun.randomUUIDv7(),
        metadata: { n: `${issued}` },
        createdAt: new Date(),
      });
      pending.push(
        store.runs.create(run, options.idempotency ? idempotencyFor(run, `key-${issued}`) : undefined),
      );
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(pending);
  const seconds = (performance.now() - started) / 1000;
  const [row] = await store.client<{ n: number }[]>`SELECT count(*)::int AS n FROM runs`;
  const averageBatch = batches.reduce((sum, size) => sum + size, 0) / batches.length;
  console.log(
    `${label}: ${row?.n} runs in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} creates/s ` +
      `(${batches.length} commits, ${averageBatch.toFixed(1)} runs each)`,
  );
  await store.close();
  await database.drop();
};

/** `clients` callers, each creating its next run once the previous one is acknowledged. */
const measureClosedLoop = async (label: string, clients: number, maxConcurrentBatches: number) => {
  const database = await createTestDatabase();
  const batches: number[] = [];
  const store = await openPostgresStore({
    url: database.url,
    maxConcurrentBatches,
    onCreateBatch: (size) => batches.push(size),
  });
  const tenant = await addTenant(store);
  const version = await pushPrompt(store, tenant.id);
  const latencies: number[] = [];
  let issued = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (issued < total) {
        issued++;
        const begin = performance.now();
        await store.runs.create(newRun(version, { createdAt: new Date() }));
        latencies.push(performance.now() - begin);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const percentile = (p: number) => latencies[Math.floor((latencies.length - 1) * p)]?.toFixed(1);
  console.log(
    `${label}: ${Math.round(latencies.length / seconds)} creates/s, latency p50 ${percentile(0.5)} ms, ` +
      `p99 ${percentile(0.99)} ms (${batches.length} commits, ` +
      `${(latencies.length / batches.length).toFixed(1)} runs each)`,
  );
  await store.close();
  await database.drop();
};

await measure("group commit, 100 per turn, 2 in flight", {
  maxBatch: 256,
  maxConcurrentBatches: 2,
  perTurn: 100,
});
await measure("group commit, 100 per turn, 1 in flight", {
  maxBatch: 256,
  maxConcurrentBatches: 1,
  perTurn: 100,
});
await measure("group commit, 100 per turn, 4 in flight", {
  maxBatch: 256,
  maxConcurrentBatches: 4,
  perTurn: 100,
});
await measure("group commit, 100 per turn, with idempotency keys", {
  maxBatch: 256,
  maxConcurrentBatches: 2,
  perTurn: 100,
  idempotency: true,
});
await measure("group commit, 1 per turn", { maxBatch: 256, maxConcurrentBatches: 2, perTurn: 1 });
await measureClosedLoop("100 clients in a closed loop, 4 in flight", 100, 4);
await measureClosedLoop("100 clients in a closed loop, 1 in flight", 100, 1);
await measure("one commit per run, 100 per turn, 10 in flight", {
  maxBatch: 1,
  maxConcurrentBatches: 10,
  perTurn: 100,
});
