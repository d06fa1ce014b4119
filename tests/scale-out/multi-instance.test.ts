/**
 * Scale-out (docs/DEPLOYMENT.md): three real server processes on one Postgres database and one
 * Redis. Runs are sent to all of them, threads are watched through SSE on instances other than
 * the one that took the request, and one instance is killed (SIGKILL) while it executes runs.
 * Shown: every run completes exactly once (its exchange is in the thread memory once), every
 * subscriber gets each run's tokens in order and the runs of a channel in creation order, the
 * per-tenant concurrency limit and the rate limit hold across instances, a cancel sent to one
 * instance stops the run another executes, and the dead instance's runs are taken over once
 * its leases lapse.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { type ReceivedEvent, SseConnection } from "../support/sse.ts";
import {
  type ClusterDatabase,
  checkPostgresAndRedis,
  createClusterDatabase,
  REDIS_URL,
  redisPrefix,
} from "./cluster-support.ts";

const available = await checkPostgresAndRedis();

const TENANT_CONCURRENCY = 4;
const BURST = 40;
const THREADS = 9;
const RUNS_PER_THREAD = 4;

describe.skipIf(!available)("three instances on Postgres + Redis", () => {
  let database: ClusterDatabase;
  let keys: ReturnType<typeof redisPrefix>;
  const instances: TestServer[] = [];
  let apiKey = "";
  let tenantId = "";

  beforeAll(async () => {
    database = await createClusterDatabase();
    keys = redisPrefix();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL,
      PROMPTRUN_REDIS_PREFIX: keys.prefix,
      PROMPTRUN_SECRET: "scale-out-test-secret-0123456789abcdef",
      PROMPTRUN_CONCURRENCY: "3",
      PROMPTRUN_TENANT_CONCURRENCY: String(TENANT_CONCURRENCY),
      // 40 at once, then one a minute: nothing refills during the test.
      PROMPTRUN_RATE_LIMIT: `1/m,${BURST}`,
      PROMPTRUN_RUN_LEASE_MS: "2000",
    };
    // The first instance seeds the demo tenant and its prompts; the others join the same database.
    const first = await startServer({ env });
    apiKey = first.apiKey;
    tenantId = first.tenantId;
    instances.push(first);
    for (let index = 1; index < 3; index++) {
      instances.push(Object.assign(await startServer({ env, seedDemo: false }), { apiKey, tenantId }));
    }
  }, 60_000);

  afterAll(async () => {
    await Promise.all(instances.map((instance) => instance.stop()));
    await database?.drop();
    await keys?.cleanup();
  });

  const createRun = async (instance: TestServer, body: Record<string, unknown>, key = apiKey) => {
    const response = await api(instance, "/api/v1/prompts/chat/latest/runs", {
      method: "POST",
      key,
      json: body,
    });
    return response;
  };

  /** The instance holding a live lease on the run (by the pid in its lease owner), if any. */
  const executingInstance = async (runId: string): Promise<TestServer | null> => {
    const [row] = await database.sql`
      SELECT lease_owner FROM runs WHERE id = ${runId} AND status = 'pending' AND lease_until > now()`;
    const owner = (row as { lease_owner: string | null } | undefined)?.lease_owner;
    if (!owner) return null;
    return instances.find((instance) => owner.includes(`:${instance.process.pid}:`)) ?? null;
  };

  test("the rate limit is one bucket for the whole cluster", async () => {
    const created = await instances[0]!.cli<{ apiKey: string; tenant: { id: string } }>(
      "tenants",
      "create",
      "bursty",
    );
    await instances[0]!.cli(
      "prompts",
      "push",
      `${import.meta.dir}/../../prompts`,
      "--tenant",
      created.json.tenant.id,
    );
    const responses = await Promise.all(
      Array.from({ length: BURST + 12 }, (_, index) =>
        createRun(instances[index % 3]!, { inputs: { message: "hi" } }, created.json.apiKey),
      ),
    );
    const statuses = responses.map((response) => response.status);
    // Each instance alone would have let 40 through.
    expect(statuses.filter((status) => status === 202)).toHaveLength(BURST);
    expect(statuses.filter((status) => status === 429)).toHaveLength(12);
    const limited = responses.find((response) => response.status === 429)!;
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(await limited.json()).toMatchObject({ error: expect.stringContaining("rate limit") });
  }, 60_000);

  test("failed console sign-ins are counted for the whole cluster: the 11th from an address is 429 on every instance", async () => {
    const signIn = (instance: TestServer, key: string) =>
      fetch(`${instance.url}/console/session`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ apiKey: key }),
      });
    const wrong = `pr_live_${"z".repeat(43)}`;
    // Ten wrong keys from this address, spread over the three instances: each alone saw 3 or 4.
    for (let attempt = 0; attempt < 10; attempt++) {
      expect((await signIn(instances[attempt % 3]!, wrong)).status).toBe(401);
    }
    for (const instance of instances) {
      const refused = await signIn(instance, apiKey);
      expect(refused.status).toBe(429);
      expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(59);
      expect(((await refused.json()) as { error: string }).error).toContain("too many failed sign-ins");
    }
  }, 30_000);

  test("a cancel sent to one instance stops the run another instance executes", async () => {
    const words = Array.from({ length: 200 }, (_, index) => `word${index}`).join(" ");
    const response = await createRun(instances[0]!, { inputs: { message: words } });
    expect(response.status).toBe(202);
    const { id } = (await response.json()) as { id: string };
    let executing: TestServer | null = null;
    for (const deadline = Date.now() + 20_000; !executing && Date.now() < deadline; await Bun.sleep(20)) {
      executing = await executingInstance(id);
    }
    expect(executing).not.toBeNull();
    const elsewhere = instances.find((instance) => instance !== executing)!;
    const cancelled = await api(elsewhere, `/api/v1/promptruns/${id}/cancel`, { method: "POST" });
    expect(cancelled.status).toBe(200);
    expect(await cancelled.json()).toMatchObject({ id, status: "failed", error: "cancelled" });
    // 200 words at 30 ms each would take 6 s: it stopped well before.
    const run = await waitForRun(instances[0]!, id);
    expect(run.output).toBeNull();
  }, 60_000);

  test("runs sent to every instance, one instance killed mid-run: each run once, tokens in order", async () => {
    const [first, second, victim] = instances as [TestServer, TestServer, TestServer];
    const survivors = [first, second];
    const threads = Array.from({ length: THREADS }, () => crypto.randomUUID());

    // Subscribe to every thread through a surviving instance, before any run exists.
    const streams: SseConnection[] = [];
    for (const [index, thread] of threads.entries()) {
      const minted = await api(victim, `/api/v1/threads/${thread}/stream-token`, { method: "POST" });
      expect(minted.status).toBe(200);
      const { token } = (await minted.json()) as { token: string };
      const through = survivors[index % 2]!;
      const stream = await SseConnection.open(`${through.url}/stream/${thread}`, { token });
      expect(stream.status).toBe(200);
      await stream.waitFor((event) => event.event === "ready");
      streams.push(stream);
    }

    // Sample the tenant's live leases while everything runs (one consistent snapshot per query).
    let sampling = true;
    let peakLeases = 0;
    const sampler = (async () => {
      while (sampling) {
        const [row] = await database.sql`
          SELECT count(*)::int AS n FROM runs
          WHERE tenant_id = ${tenantId} AND status = 'pending' AND lease_owner IS NOT NULL AND lease_until > now()`;
        peakLeases = Math.max(peakLeases, (row as { n: number }).n);
        await Bun.sleep(10);
      }
    })();

    // The runs of each thread, in creation order, sent round-robin to all three instances.
    const runsByThread = new Map<string, string[]>(threads.map((thread) => [thread, []]));
    const messages = new Map<string, string>();
    let sent = 0;
    for (let round = 0; round < RUNS_PER_THREAD; round++) {
      for (const thread of threads) {
        const message = Array.from({ length: 24 }, (_, index) => `r${round}w${index}`).join(" ");
        const response = await createRun(instances[sent++ % 3]!, { inputs: { message }, thread });
        expect(response.status).toBe(202);
        const { id } = (await response.json()) as { id: string };
        runsByThread.get(thread)!.push(id);
        messages.set(id, message);
      }
    }
    const allRuns = [...messages.keys()];

    // Kill the victim while it executes runs that have started streaming.
    const victimPid = victim.process.pid;
    let victimRuns: string[] = [];
    for (const deadline = Date.now() + 30_000; victimRuns.length === 0; await Bun.sleep(10)) {
      if (Date.now() > deadline) throw new Error("the victim never executed a run");
      const rows = await database.sql`
        SELECT id FROM runs WHERE status = 'pending' AND started_at IS NOT NULL
          AND lease_owner LIKE ${`%:${victimPid}:%`} AND lease_until > now()`;
      victimRuns = (rows as Array<{ id: string }>).map((row) => row.id);
    }
    await victim.kill();
    // After this instant nothing the victim did can land: a run it finished is older than this.
    const victimDeadAt = new Date();

    for (const id of allRuns) {
      const run = await waitForRun(first, id, 60_000);
      expect(run.status).toBe("completed");
      expect(run.output).toBe(messages.get(id));
    }
    sampling = false;
    await sampler;

    // Exactly once: each run's exchange (user message, output) is in the memory once.
    const rows = (await database.sql`
      SELECT run_id, count(*)::int AS n FROM messages WHERE tenant_id = ${tenantId} GROUP BY run_id`) as Array<{
      run_id: string;
      n: number;
    }>;
    const perRun = new Map(rows.map((row) => [row.run_id, row.n]));
    for (const id of allRuns) expect(perRun.get(id)).toBe(2);
    // The victim's runs were taken over and started again elsewhere, but for one it finished in
    // the moment between the query above and the kill (it ended before the victim died).
    const victimRows = (await database.sql`
      SELECT attempts, finished_at FROM runs WHERE id IN ${database.sql(victimRuns)}`) as Array<{
      attempts: number;
      finished_at: Date;
    }>;
    const resumed = victimRows.filter((row) => row.attempts >= 2);
    expect(resumed.length).toBeGreaterThanOrEqual(1);
    for (const row of victimRows.filter((candidate) => candidate.attempts < 2))
      expect(row.finished_at.getTime()).toBeLessThanOrEqual(victimDeadAt.getTime());

    // The tenant never had more runs leased than its limit, and did reach it.
    expect(peakLeases).toBeLessThanOrEqual(TENANT_CONCURRENCY);
    expect(peakLeases).toBeGreaterThanOrEqual(TENANT_CONCURRENCY - 1);

    for (const [index, thread] of threads.entries()) {
      const stream = streams[index]!;
      const runIds = runsByThread.get(thread)!;
      await stream.waitFor((event) => event.event === "run.completed" && event.data.runId === runIds.at(-1));
      const events = stream.events.filter((event) => event.event !== "ready");
      // One stream, ids strictly increasing across instances.
      const ids = events.map((event) => BigInt(event.id ?? "0"));
      for (let position = 1; position < ids.length; position++)
        expect(ids[position]! > ids[position - 1]!).toBe(true);
      // Channel order: each run's events come after the previous run's completion.
      const completedAt = runIds.map((id) =>
        events.findIndex((event) => event.event === "run.completed" && event.data.runId === id),
      );
      for (const [position, id] of runIds.entries()) {
        const firstEvent = events.findIndex((event) => event.data.runId === id);
        expect(completedAt[position]).toBeGreaterThan(firstEvent);
        if (position > 0) expect(firstEvent).toBeGreaterThan(completedAt[position - 1]!);
        expectTokensInOrder(events, id, messages.get(id)!);
      }
    }
    for (const stream of streams) stream.close();
  }, 120_000);
});

/**
 * A run's events on the stream: each attempt opens with run.started and sends tokens 0, 1, 2, …;
 * the last attempt's tokens make up the output, and run.completed comes once, at the end.
 */
function expectTokensInOrder(events: ReceivedEvent[], runId: string, output: string) {
  const ofRun = events.filter((event) => event.data.runId === runId);
  expect(ofRun[0]?.event).toBe("run.started");
  expect(ofRun.at(-1)?.event).toBe("run.completed");
  expect(ofRun.filter((event) => event.event === "run.completed")).toHaveLength(1);
  let expected = 0;
  let text = "";
  for (const event of ofRun) {
    if (event.event === "run.started") {
      expected = 0;
      text = "";
    } else if (event.event === "run.token") {
      expect(event.data.index).toBe(expected++);
      text += String(event.data.delta);
    }
  }
  expect(text).toBe(output);
}
