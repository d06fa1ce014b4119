/**
 * Property-based fuzzing of the real server with fast-check: random and mutated methods, paths,
 * headers and bodies, sent as tenant B (or anonymously) while tenant A owns completed runs.
 * Properties: never a 5xx; no response ever carries tenant A's run ids, outputs, metadata or key;
 * /api/v1 errors keep the `{"error": string}` shape; and afterwards no row references a missing
 * one, every run row obeys the state rules, A's runs are exactly as they were, and (on SQLite)
 * the file passes integrity_check and foreign_key_check.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import fc from "fast-check";
import { onPostgres } from "../support/data-set.ts";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { createTenant, pushPrompts, type Tenant } from "./support.ts";

let server: TestServer;
let tenantB: Tenant;
const marker = `tenant-a-private-${crypto.randomUUID()}`;
const runsOfA: Array<{ id: string; thread: string }> = [];
let snapshotOfA = "";

const greet = {
  slug: "greet",
  model: "dev:echo",
  inputs: { name: { type: "string" }, count: { type: "integer", optional: true } },
  messages: [{ role: "user", content: "Hi {{name}}" }],
  tags: ["production"],
};

const snapshotRunsOfA = async () =>
  JSON.stringify(
    await server.sql(
      "select id, status, output, error, finished_at, cost, token_usage, metadata from runs where tenant_id = ? order by id",
      [server.tenantId],
    ),
  );

/** Rows whose reference points nowhere, per relation (both dialects; SQLite may not enforce it). */
const ORPHAN_QUERIES = {
  "runs.tenant_id":
    "select count(*) as n from runs r left join tenants t on t.id = r.tenant_id where t.id is null",
  "runs.prompt_version_id":
    "select count(*) as n from runs r left join prompt_versions v on v.id = r.prompt_version_id where v.id is null",
  "runs.thread_id":
    "select count(*) as n from runs r left join threads t on t.tenant_id = r.tenant_id and t.id = r.thread_id where t.id is null",
  "messages.run_id":
    "select count(*) as n from messages m left join runs r on r.id = m.run_id where r.id is null",
  "prompt_versions.prompt_id":
    "select count(*) as n from prompt_versions v left join prompts p on p.id = v.prompt_id where p.id is null",
};

beforeAll(async () => {
  server = await startServer({ env: { PROMPTRUN_RATE_LIMIT: "1000/s,1000" } });
  tenantB = await createTenant(server, "fuzzer");
  await pushPrompts(server, tenantB.id, [greet]);
  for (let index = 0; index < 3; index++) {
    const response = await api(server, "/api/v1/prompts/greet/latest/runs", {
      method: "POST",
      json: { inputs: { name: `${marker}-${index}` }, metadata: { secret: marker } },
    });
    runsOfA.push((await response.json()) as { id: string; thread: string });
  }
  for (const run of runsOfA) await waitForRun(server, run.id);
  snapshotOfA = await snapshotRunsOfA();
});
afterAll(async () => {
  await server?.dispose();
});

const printable = fc.string({
  unit: fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code)),
});
const hostileText = fc.oneof(
  fc.string(),
  fc.string({ unit: "binary" }),
  printable,
  fc.constantFrom(
    "..",
    "%2e%2e",
    "%00",
    "%ff",
    "%",
    "latest",
    "production",
    "1",
    "0",
    "-1",
    "99999999999999999999",
  ),
  fc.constantFrom(
    "a".repeat(3000),
    "\u0000",
    "\ud800",
    "💥",
    "<script>",
    "' or 1=1 --",
    "{{env.OPENAI_API_KEY}}",
  ),
);
const uuidLike = fc.oneof(fc.uuid(), fc.constantFrom(...["0", "00000000-0000-0000-0000-000000000000"]));
/** Segments that point at tenant A's data, real or not. */
const idSegment = fc.oneof(
  fc.constant(null).map(() => runsOfA[0]!.id),
  fc.constant(null).map(() => runsOfA[1]!.id.toUpperCase()),
  fc.constant(null).map(() => runsOfA[2]!.thread),
  uuidLike,
  hostileText,
);
/** encodeURIComponent, except that a lone surrogate becomes bytes that are not valid UTF-8 (hostile too). */
const encode = (segment: string) => {
  try {
    return encodeURIComponent(segment);
  } catch {
    return `${encodeURIComponent(segment.replace(/[\ud800-\udfff]/g, ""))}%ED%A0%80`;
  }
};
const encodeSegment = (segment: string, raw: boolean) =>
  raw ? segment.replace(/[/?#]/g, "_") : encode(segment);

const pathArbitrary = fc.oneof(
  fc
    .tuple(
      fc.oneof(fc.constant("greet"), fc.constant("chat"), hostileText),
      fc.oneof(fc.constantFrom("latest", "production", "1", "2"), idSegment),
      fc.boolean(),
    )
    .map(
      ([slug, version, raw]) =>
        `/api/v1/prompts/${encodeSegment(slug, raw)}/${encodeSegment(version, raw)}/runs`,
    ),
  fc.tuple(idSegment, fc.boolean()).map(([id, raw]) => `/api/v1/promptruns/${encodeSegment(id, raw)}`),
  fc.tuple(idSegment, fc.boolean()).map(([id, raw]) => `/api/v1/promptruns/${encodeSegment(id, raw)}/cancel`),
  fc
    .tuple(idSegment, fc.boolean())
    .map(([id, raw]) => `/api/v1/threads/${encodeSegment(id, raw)}/stream-token`),
  fc.tuple(idSegment, fc.boolean()).map(([id, raw]) => `/stream/${encodeSegment(id, raw)}`),
  idSegment.map((id) => `/trpc/run.get?input=${encode(JSON.stringify({ id }))}`),
  fc.constantFrom(
    "/trpc/run.list",
    "/trpc/thread.get",
    "/trpc/prompt.list",
    "/trpc/run.create",
    "/health",
    "/api/v1/openapi.json",
  ),
  fc.array(hostileText, { maxLength: 5 }).map((segments) => `/${segments.map(encode).join("/")}`),
);

const validBody = fc.record({
  inputs: fc.record({ name: fc.string({ maxLength: 40 }) }),
  thread: fc.option(
    fc.oneof(
      fc.uuid(),
      fc.constant(null).map(() => runsOfA[0]!.thread),
    ),
    { nil: undefined },
  ),
  priority: fc.option(fc.constantFrom("onsite", "normal", "low"), { nil: undefined }),
  channel: fc.option(fc.string({ maxLength: 20 }), { nil: undefined }),
  metadata: fc.option(
    fc.dictionary(fc.string({ maxLength: 10 }), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
    {
      nil: undefined,
    },
  ),
  envVars: fc.option(
    fc.dictionary(fc.stringMatching(/^[A-Z][A-Z0-9_]{0,10}$/), fc.string({ maxLength: 20 }), { maxKeys: 3 }),
    {
      nil: undefined,
    },
  ),
});
/** A valid body with one random change: a field replaced by anything, a field dropped, an unknown one added. */
const mutatedBody = fc
  .tuple(
    validBody,
    fc.constantFrom("replace", "drop", "add", "none"),
    fc.constantFrom("inputs", "thread", "priority", "channel", "metadata", "envVars", "environment"),
    fc.jsonValue(),
  )
  .map(([body, mutation, field, value]) => {
    const copy: Record<string, unknown> = { ...body };
    if (mutation === "replace") copy[field] = value;
    if (mutation === "drop") delete copy[field];
    if (mutation === "add") copy[`x_${field}`] = value;
    return JSON.stringify(copy);
  });
const bodyArbitrary = fc.oneof(
  { weight: 4, arbitrary: mutatedBody },
  { weight: 1, arbitrary: fc.jsonValue().map((value) => JSON.stringify(value) ?? "null") },
  { weight: 1, arbitrary: fc.string() },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }) },
  { weight: 1, arbitrary: fc.constant(undefined) },
);

const authorization = fc.oneof(
  fc.constant(null).map(() => `Bearer ${tenantB.apiKey}`),
  fc.constant(null).map(() => `Bearer ${tenantB.apiKey}`),
  fc.constant(null).map(() => `Bearer ${tenantB.apiKey.slice(0, -1)}`),
  fc.constant(null).map(() => `bearer  ${tenantB.apiKey}`),
  printable.map((text) => `Bearer ${text}`),
  printable,
  fc.constant(undefined),
);
const headersArbitrary = fc.record(
  {
    authorization,
    "content-type": fc.oneof(
      fc.constantFrom(
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/x-www-form-urlencoded",
        "APPLICATION/JSON;charset=latin1",
      ),
      printable,
    ),
    "idempotency-key": fc.oneof(printable, fc.uuid()),
    "x-request-id": printable,
    "content-length": fc.constantFrom("0", "5", "999999999", "-1", "abc"),
    "last-event-id": printable,
  },
  { requiredKeys: [] },
);

const anything = fc.record({
  method: fc.constantFrom("GET", "POST", "POST", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"),
  path: pathArbitrary,
  headers: headersArbitrary,
  body: bodyArbitrary,
});
/** Well-formed enough to reach validation and the services: B's key, JSON, a mutated body. */
const nearlyValidCreate = fc.record({
  method: fc.constant("POST"),
  path: fc.constantFrom(
    "/api/v1/prompts/greet/latest/runs",
    "/api/v1/prompts/greet/production/runs",
    "/api/v1/prompts/greet/1/runs",
  ),
  headers: fc.record(
    {
      authorization: fc.constant(null).map(() => `Bearer ${tenantB.apiKey}`),
      "content-type": fc.constant("application/json"),
      "idempotency-key": fc.oneof(fc.constantFrom("k1", "k2", "k3"), printable),
    },
    { requiredKeys: ["authorization", "content-type"] },
  ),
  body: fc.oneof(
    { weight: 3, arbitrary: mutatedBody },
    { weight: 1, arbitrary: validBody.map((body) => JSON.stringify(body)) },
  ),
});
/** B's key on the read, cancel and token routes, aimed at A's ids and at garbage. */
const nearlyValidAccess = fc.record({
  method: fc.constantFrom("GET", "POST"),
  path: fc.oneof(
    idSegment.map((id) => `/api/v1/promptruns/${encode(id)}`),
    idSegment.map((id) => `/api/v1/promptruns/${encode(id)}/cancel`),
    idSegment.map((id) => `/api/v1/threads/${encode(id)}/stream-token`),
    idSegment.map((id) => `/trpc/run.get?input=${encode(JSON.stringify({ id }))}`),
    idSegment.map((thread) => `/trpc/thread.get?input=${encode(JSON.stringify({ thread }))}`),
  ),
  headers: fc.record({ authorization: fc.constant(null).map(() => `Bearer ${tenantB.apiKey}`) }),
  body: fc.constant(undefined),
});
const requestArbitrary = fc.oneof(
  { weight: 3, arbitrary: nearlyValidCreate },
  { weight: 2, arbitrary: nearlyValidAccess },
  { weight: 3, arbitrary: anything },
);

const decodeURIComponentSafe = (text: string) => {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
};

/** Text of tenant A that tenant B must never receive. */
const forbiddenTexts = () => [marker, server.apiKey, ...runsOfA.map((run) => run.id)];

type FuzzRequest = typeof requestArbitrary extends fc.Arbitrary<infer T> ? T : never;

async function send(request: FuzzRequest) {
  const headers = new Headers();
  for (const [name, value] of Object.entries(request.headers)) {
    if (typeof value === "string") headers.set(name, value);
  }
  const canHaveBody = request.method !== "GET" && request.method !== "HEAD";
  const response = await fetch(`${server.url}${request.path}`, {
    method: request.method,
    headers,
    ...(canHaveBody && request.body !== undefined ? { body: request.body } : {}),
  });
  // SSE answers stay open: the first chunk is enough.
  if (response.headers.get("content-type")?.includes("text/event-stream")) {
    const reader = response.body!.getReader();
    const first = await Promise.race([reader.read(), Bun.sleep(2_000).then(() => ({ value: undefined }))]);
    await reader.cancel().catch(() => {});
    return { response, text: first.value ? new TextDecoder().decode(first.value) : "" };
  }
  return { response, text: await response.text() };
}

/**
 * A new seed each run unless FUZZ_SEED gives one; printed before the run so a failure (or a
 * crash that never reaches fast-check's own report) can be replayed exactly.
 */
const fuzzSeed = (() => {
  const given = process.env.FUZZ_SEED;
  if (given === undefined || given === "") return Date.now() % 2_147_483_647;
  if (!/^-?\d+$/.test(given)) throw new Error(`FUZZ_SEED must be an integer, got '${given}'`);
  return Number(given);
})();

describe("fuzzing the HTTP surface as another tenant", () => {
  test("no 5xx, no leak of tenant A's data, error bodies keep their shape", async () => {
    let requests = 0;
    console.info(
      `fuzz seed ${fuzzSeed} (replay: FUZZ_SEED=${fuzzSeed} bun test --cwd tests hardening/fuzz.test.ts)`,
    );
    await fc.assert(
      fc.asyncProperty(requestArbitrary, async (request) => {
        requests += 1;
        let result: Awaited<ReturnType<typeof send>>;
        try {
          result = await send(request);
        } catch (error) {
          // fetch refused to build the request (an invalid header value): nothing reached the server.
          if (error instanceof TypeError) return;
          throw error;
        }
        const { response, text } = result;
        expect(response.status).toBeLessThan(500);
        // An id the request itself carried may be echoed back ("run '…' not found"); nothing else of A may appear.
        const sent = decodeURIComponentSafe(
          `${request.path} ${JSON.stringify(request.headers)} ${typeof request.body === "string" ? request.body : ""}`,
        ).toLowerCase();
        const received = text.toLowerCase();
        for (const forbidden of forbiddenTexts()) {
          const secret = forbidden.toLowerCase();
          if (!sent.includes(secret)) expect(received.includes(secret)).toBe(false);
        }
        const isApi = request.path.startsWith("/api/v1/") && !request.path.endsWith("openapi.json");
        if (isApi && response.status >= 400 && request.method !== "HEAD") {
          expect(response.headers.get("content-type")).toContain("application/json");
          expect(typeof (JSON.parse(text) as { error: unknown }).error).toBe("string");
        }
      }),
      { numRuns: 400, seed: fuzzSeed, endOnFailure: true },
    );
    expect(requests).toBeGreaterThanOrEqual(400);
  }, 90_000);

  test("the stored state is intact: no orphan rows, every run obeys the state rules, A's runs unchanged", async () => {
    // Let the runs the fuzzer started finish (or at least be in a consistent state).
    await Bun.sleep(500);
    const orphans: Record<string, number> = {};
    for (const [relation, query] of Object.entries(ORPHAN_QUERIES)) {
      const [row] = await server.sql<{ n: number | string }>(query);
      orphans[relation] = Number(row?.n);
    }
    expect(orphans).toEqual(Object.fromEntries(Object.keys(ORPHAN_QUERIES).map((relation) => [relation, 0])));

    const rows = await server.sql<{
      id: string;
      status: string;
      finished_at: number | Date | null;
      output: string | null;
      error: string | null;
      token_usage: unknown;
      cost: unknown;
    }>("select id, status, finished_at, output, error, token_usage, cost from runs");
    expect(rows.length).toBeGreaterThan(runsOfA.length);
    for (const row of rows) {
      expect(["pending", "completed", "failed"]).toContain(row.status);
      if (row.status === "pending") {
        expect([row.finished_at, row.output, row.token_usage, row.cost]).toEqual([null, null, null, null]);
      } else if (row.status === "failed") {
        expect([row.output, row.token_usage]).toEqual([null, null]);
        expect(typeof row.error).toBe("string");
        expect(row.finished_at).not.toBeNull();
      } else {
        expect(row.error).toBeNull();
        expect(row.finished_at).not.toBeNull();
        expect(typeof row.output).toBe("string");
      }
    }
    expect(await snapshotRunsOfA()).toBe(snapshotOfA);
    // Tenant B never obtained a run of A through its own namespace either.
    const [leaked] = await server.sql<{ n: number | string }>(
      "select count(*) as n from runs where tenant_id = ? and output like ?",
      [tenantB.id, `%${marker}%`],
    );
    expect(Number(leaked?.n)).toBe(0);
  });

  if (onPostgres)
    console.log("fuzz: PRAGMA integrity_check/foreign_key_check are SQLite's; Postgres enforces its keys");
  test.skipIf(onPostgres)("the SQLite file passes integrity_check and foreign_key_check", async () => {
    expect(await server.sql("PRAGMA integrity_check")).toEqual([{ integrity_check: "ok" }]);
    expect(await server.sql("PRAGMA foreign_key_check")).toEqual([]);
  });
});
