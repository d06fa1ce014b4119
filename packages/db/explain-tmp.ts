import { openPostgresStore } from "./src/postgres/open.ts";
import { createTestDatabase } from "./src/postgres/test-database.ts";
import { addTenant, newRun, pushPrompt, at } from "./src/conformance/fixtures.ts";
const database = await createTestDatabase();
const store = await openPostgresStore({ url: database.url });
try {
  const tenants = await Promise.all([1,2,3,4,5].map((i) => addTenant(store, `t${i}`)));
  const versions = await Promise.all(tenants.map((t) => pushPrompt(store, t.id)));
  const mode = process.argv[2] ?? "spread";
  const threads = Array.from({ length: mode === "spread" ? 100000 : 3 }, () => Bun.randomUUIDv7());
  const t0 = performance.now();
  for (let batch = 0; batch < 100; batch++) {
    await Promise.all(Array.from({ length: 1000 }, (_, i) => {
      const n = batch * 1000 + i;
      const tenantIndex = mode === "spread" ? n % 5 : 0;
      return store.runs.create(newRun(versions[tenantIndex]!, { threadId: threads[n % threads.length], priority: n % 10 === 0 ? "low" : "normal", createdAt: at(n / 1000) }));
    }));
  }
  console.log("inserted", performance.now() - t0);
  await store.client`ANALYZE runs`;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const r = await store.runs.listClaimable(at(1000), 64);
    console.log("listClaimable", r.length, (performance.now() - t).toFixed(1), "ms");
  }
  const head = (await store.runs.listClaimable(at(1000), 1))[0]!;
  for (let i = 0; i < 3; i++) {
    const t = performance.now();
    const ok = await store.runs.claim(head.id, "x" + i, at(2000), at(1000), { tenantLimit: 8 });
    console.log("claim", ok, (performance.now() - t).toFixed(1), "ms");
  }
  const plan = await store.client.unsafe(`EXPLAIN ANALYZE SELECT id FROM runs WHERE status = 'pending' AND priority = 'normal' AND (lease_owner IS NULL OR lease_until <= now()) AND NOT EXISTS (SELECT 1 FROM runs earlier WHERE earlier.status='pending' AND earlier.tenant_id = runs.tenant_id AND earlier.thread_id = runs.thread_id AND earlier.channel = runs.channel AND (earlier.created_at, earlier.id) < (runs.created_at, runs.id)) ORDER BY created_at, id LIMIT 64`);
  for (const row of plan) console.log(Object.values(row)[0]);
} finally {
  await store.close();
  await database.drop();
}
