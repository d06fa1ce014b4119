/**
 * Measures runs.create throughput on a temp file (synchronous=FULL, WAL), group-committed vs
 * one commit per run. `bun scripts/measure-create.ts [runs]`. Not a test: figures vary by machine.
 */
import { addTenant, newRun, pushPrompt } from "@promptrun/core/testing";
import { openTempStore } from "../src/sqlite/test-fixtures.ts";

const total = Number(process.argv[2] ?? 20_000);

const measure = async (label: string, options: { maxBatch: number; perTurn: number }) => {
  const { store, dispose } = await openTempStore({ maxBatch: options.maxBatch });
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
      });
      pending.push(store.runs.create(run));
    }
    await new Promise((resolve) => setImmediate(resolve));
  }
  await Promise.all(pending);
  const seconds = (performance.now() - started) / 1000;
  const count = store.raw.query<{ n: number }, []>("select count(*) as n from runs").get()?.n;
  console.log(
    `${label}: ${count} runs in ${seconds.toFixed(2)} s = ${Math.round(total / seconds)} creates/s`,
  );
  await dispose();
};

await measure("group commit, 256 arriving per turn", { maxBatch: 256, perTurn: 256 });
await measure("group commit, 32 arriving per turn", { maxBatch: 256, perTurn: 32 });
await measure("group commit, all at once", { maxBatch: 256, perTurn: total });
await measure("group commit, 1 arriving per turn", { maxBatch: 256, perTurn: 1 });
await measure("one commit per run", { maxBatch: 1, perTurn: 256 });
