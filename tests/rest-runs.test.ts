/**
 * GET /api/v1/promptruns (filters, pagination while runs arrive) and GET /api/v1/usage (figures
 * equal the sums of the runs) over a real server, on SQLite or Postgres (PROMPTRUN_E2E_DATABASE);
 * tenant isolation, 401 and 400s, every response checked against the served OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { fetchOpenApiDocument, type OpenApiDocumentJson, responseValidator } from "./support/openapi.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

interface Run {
  id: string;
  thread: string;
  channel: string;
  prompt: { slug: string; version: number };
  environment: string;
  status: string;
  createdAt: string;
  metadata: Record<string, unknown>;
  tokenUsage: Record<string, number> | null;
  cost: {
    success: { total: number; priced?: boolean };
    retries: { total: number; priced?: boolean };
    total: number;
  } | null;
}
interface RunPage {
  items: Run[];
  nextCursor: string | null;
}
interface UsageItem {
  key: string;
  runs: number;
  completed: number;
  failed: number;
  tokenUsage: Record<string, number>;
  cost: { success: number; retries: number; total: number };
  unpricedRuns: number;
}

let server: TestServer;
let other: { url: string; apiKey: string; tenantId: string };
let document: OpenApiDocumentJson;
const thread = crypto.randomUUID();
const runs: Record<"v1" | "v2" | "remote" | "greet", Run> = {} as never;
let theirRunId: string;

const createRun = async (
  owner: { url: string; apiKey: string },
  slug: string,
  version: string,
  body: unknown,
) => {
  const response = await api(owner, `/api/v1/prompts/${slug}/${version}/runs`, {
    method: "POST",
    json: body,
  });
  if (response.status !== 202) throw new Error(`create ${slug}: ${response.status} ${await response.text()}`);
  const { id } = (await response.json()) as { id: string };
  return (await waitForRun(owner, id)) as unknown as Run;
};

const push = async (tenantId: string, name: string, yaml: string) => {
  const dir = `${server.dataDir}/prompts-${name}`;
  await Bun.write(`${dir}/p.yaml`, yaml);
  const pushed = await server.cli("prompts", "push", dir, "--tenant", tenantId);
  if (pushed.code !== 0) throw new Error(`push ${name}: ${pushed.stderr}`);
};
const alpha = (text: string) =>
  `slug: alpha\nmodel: dev:echo\ninputs: { name: { type: string } }\nmessages:\n  - { role: user, content: "${text} {{name}}" }\n`;

beforeAll(async () => {
  server = await startServer();
  const created = await server.cli<{ tenant: { id: string }; apiKey: string }>("tenants", "create", "other");
  other = { url: server.url, apiKey: created.json.apiKey, tenantId: created.json.tenant.id };
  await server.cli("envs", "set", server.tenantId, "staging", "X=1");
  await push(server.tenantId, "alpha1", alpha("one"));
  await push(server.tenantId, "alpha2", alpha("two"));
  // No OpenAI key in the server's environment: its runs fail (a failed run with a model).
  await push(
    server.tenantId,
    "remote",
    'slug: remote\nmodel: openai:gpt-4o-mini\nmessages:\n  - { role: user, content: "hi" }\n',
  );
  await push(other.tenantId, "theirs", alpha("theirs"));
  runs.v1 = await createRun(server, "alpha", "1", {
    inputs: { name: "A" },
    thread,
    metadata: { customer: "acme", tags: ["vip", "eu"] },
  });
  runs.v2 = await createRun(server, "alpha", "2", {
    inputs: { name: "B" },
    thread,
    channel: "side",
    environment: "staging",
    metadata: { customer: "zeta" },
  });
  runs.remote = await createRun(server, "remote", "latest", { inputs: {}, metadata: { tags: ["eu"] } });
  runs.greet = await createRun(server, "greet", "latest", { inputs: { name: "C" } });
  theirRunId = (
    await createRun(other, "alpha", "latest", { inputs: { name: "T" }, metadata: { customer: "acme" } })
  ).id;
  document = await fetchOpenApiDocument(server.url);
}, 120_000);
afterAll(async () => {
  await server?.dispose();
});

const validate = (path: string, status: number, body: unknown) => {
  const check = responseValidator(document, path, "get", String(status));
  expect(check(body) ? [] : check.errors).toEqual([]);
};

const list = async (query: string, owner: { url: string; apiKey: string } = server): Promise<RunPage> => {
  const response = await api(owner, `/api/v1/promptruns${query}`);
  const body = (await response.json()) as RunPage;
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${JSON.stringify(body)}`);
  validate("/api/v1/promptruns", 200, body);
  return body;
};
const ids = async (query: string) => (await list(query)).items.map((run) => run.id);

const expect400 = async (path: string, ...parts: string[]) => {
  const response = await api(server, path);
  const body = (await response.json()) as { error: string };
  expect([path, response.status]).toEqual([path, 400]);
  for (const part of parts) expect(body.error).toContain(part);
  validate(path.split("?")[0]!, 400, body);
};

describe("GET /api/v1/promptruns", () => {
  test("the runs ended as set up (a failed one included)", () => {
    expect(runs.remote.status).toBe("failed");
    expect([runs.v1.status, runs.v2.status, runs.greet.status]).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
  });

  test("newest first, every filter alone", async () => {
    const { v1, v2, remote, greet } = runs;
    expect(await ids("")).toEqual([greet.id, remote.id, v2.id, v1.id]);
    expect(await ids(`?thread=${thread}`)).toEqual([v2.id, v1.id]);
    expect(await ids(`?thread=${thread.toUpperCase()}`)).toEqual([v2.id, v1.id]);
    expect(await ids("?status=failed")).toEqual([remote.id]);
    expect(await ids("?status=completed")).toEqual([greet.id, v2.id, v1.id]);
    expect(await ids("?status=pending")).toEqual([]);
    expect(await ids("?phase=queued")).toEqual([]);
    expect(await ids("?phase=running")).toEqual([]);
    expect(await ids("?phase=requires_action")).toEqual([]);
    expect(await ids("?prompt=alpha")).toEqual([v2.id, v1.id]);
    expect(await ids("?prompt=alpha&version=1")).toEqual([v1.id]);
    expect(await ids("?environment=staging")).toEqual([v2.id]);
    expect(await ids("?environment=production")).toEqual([greet.id, remote.id, v1.id]);
    expect(await ids("?channel=side")).toEqual([v2.id]);
    expect(await ids("?metadata.customer=acme")).toEqual([v1.id]);
    expect(await ids("?metadata.tags=eu")).toEqual([remote.id, v1.id]);
    expect(await ids("?metadata.tags=e")).toEqual([]);
    expect(await ids(`?createdAfter=${encodeURIComponent(v2.createdAt)}`)).toEqual([
      greet.id,
      remote.id,
      v2.id,
    ]);
    expect(await ids(`?createdBefore=${encodeURIComponent(v2.createdAt)}`)).toEqual([v1.id]);
    const offset = new Date(Date.parse(v2.createdAt)).toISOString().replace("Z", "+00:00");
    expect(await ids(`?createdBefore=${encodeURIComponent(offset)}`)).toEqual([v1.id]);
  });

  test("filters combine with AND", async () => {
    const { v1, v2, remote } = runs;
    expect(await ids(`?prompt=alpha&thread=${thread}&metadata.customer=zeta`)).toEqual([v2.id]);
    expect(await ids("?status=completed&metadata.tags=eu")).toEqual([v1.id]);
    expect(await ids("?metadata.tags=eu&metadata.customer=acme")).toEqual([v1.id]);
    expect(await ids("?environment=production&status=failed&prompt=remote")).toEqual([remote.id]);
    expect(await ids("?environment=staging&channel=default")).toEqual([]);
    expect(
      await ids(
        `?createdAfter=${encodeURIComponent(v1.createdAt)}&createdBefore=${encodeURIComponent(remote.createdAt)}`,
      ),
    ).toEqual([v2.id, v1.id]);
  });

  test("unknown filters and malformed values are 400s naming the parameter", async () => {
    await expect400("/api/v1/promptruns?foo=1&bar=2", "'foo'", "'bar'");
    await expect400("/api/v1/promptruns?slug=alpha", "'slug'");
    await expect400("/api/v1/promptruns?thread=nope", "thread");
    await expect400("/api/v1/promptruns?status=done", "status");
    await expect400("/api/v1/promptruns?phase=sleeping", "phase");
    await expect400("/api/v1/promptruns?prompt=Not%20A%20Slug", "prompt");
    await expect400("/api/v1/promptruns?version=1", "version");
    await expect400("/api/v1/promptruns?prompt=alpha&version=abc", "version");
    await expect400("/api/v1/promptruns?prompt=alpha&version=0", "version");
    await expect400("/api/v1/promptruns?createdAfter=yesterday", "createdAfter");
    await expect400("/api/v1/promptruns?createdBefore=2026-01-01T00:00:00", "createdBefore");
    await expect400("/api/v1/promptruns?metadata.=x", "metadata");
    await expect400("/api/v1/promptruns?status=failed&status=completed", "status");
    await expect400("/api/v1/promptruns?limit=0", "limit");
    await expect400("/api/v1/promptruns?limit=201", "limit");
    await expect400("/api/v1/promptruns?limit=ten", "limit");
    await expect400("/api/v1/promptruns?cursor=garbage", "cursor");
  });

  test("401 without a valid key, with WWW-Authenticate; 405 for another method", async () => {
    for (const key of [null, "pr_not_a_real_key"]) {
      const response = await api(server, "/api/v1/promptruns", { key });
      expect(response.status).toBe(401);
      expect(response.headers.get("www-authenticate")).toContain("Bearer");
      validate("/api/v1/promptruns", 401, await response.json());
    }
    const post = await api(server, "/api/v1/promptruns", { method: "POST", json: {} });
    expect(post.status).toBe(405);
  });

  test("another tenant's runs are invisible, and ours to them", async () => {
    expect(await ids("?metadata.customer=acme")).not.toContain(theirRunId);
    expect((await list("")).items.map((run) => run.id)).not.toContain(theirRunId);
    expect((await list("", other)).items.map((run) => run.id)).toEqual([theirRunId]);
    expect((await list(`?thread=${thread}`, other)).items).toEqual([]);
  });

  test("pages stay stable while runs are being created: none twice, none missed", async () => {
    const before = await ids("?limit=200");
    const seen: string[] = [];
    const arrived: string[] = [];
    let cursor: string | null = null;
    do {
      const page: RunPage = await list(`?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`);
      seen.push(...page.items.map((run) => run.id));
      cursor = page.nextCursor;
      // Two runs arrive between pages.
      for (const name of ["P", "Q"])
        arrived.push((await createRun(server, "alpha", "latest", { inputs: { name } })).id);
    } while (cursor);
    expect(new Set(seen).size).toBe(seen.length);
    expect(seen).toEqual(before);
    for (const id of arrived) expect(seen).not.toContain(id);
    expect((await ids("?limit=200")).slice(0, arrived.length)).toEqual([...arrived].reverse());
  }, 120_000);
});

const usage = async (query: string, owner: { url: string; apiKey: string } = server) => {
  const response = await api(owner, `/api/v1/usage${query}`);
  const body = (await response.json()) as { items: UsageItem[] };
  if (response.status !== 200) throw new Error(`${query}: ${response.status} ${JSON.stringify(body)}`);
  validate("/api/v1/usage", 200, body);
  return body.items;
};

/** The expected items: each ended run read back with GET, summed per key. */
async function expectedUsage(keyOf: (run: Run) => string): Promise<UsageItem[]> {
  const groups = new Map<string, UsageItem>();
  for (const id of await ids("?limit=200")) {
    const run = (await (await api(server, `/api/v1/promptruns/${id}`)).json()) as Run;
    if (run.status === "pending") continue;
    const key = keyOf(run);
    const group = groups.get(key) ?? {
      key,
      runs: 0,
      completed: 0,
      failed: 0,
      tokenUsage: { input: 0, inputCached: 0, output: 0, reasoning: 0, total: 0 },
      cost: { success: 0, retries: 0, total: 0 },
      unpricedRuns: 0,
    };
    group.runs += 1;
    if (run.status === "completed") group.completed += 1;
    else group.failed += 1;
    for (const field of Object.keys(group.tokenUsage))
      group.tokenUsage[field]! += run.tokenUsage?.[field] ?? 0;
    group.cost.success += run.cost?.success.total ?? 0;
    group.cost.retries += run.cost?.retries.total ?? 0;
    group.cost.total += run.cost?.total ?? 0;
    if (!run.cost || run.cost.success.priced === false || run.cost.retries.priced === false)
      group.unpricedRuns += 1;
    groups.set(key, group);
  }
  return [...groups.values()].sort((a, b) => (a.key < b.key ? -1 : 1));
}

const expectSameUsage = (actual: UsageItem[], expected: UsageItem[]) => {
  expect(actual.map((item) => item.key)).toEqual(expected.map((item) => item.key));
  actual.forEach((item, index) => {
    const want = expected[index]!;
    expect({ ...item, cost: null }).toEqual({ ...want, cost: null });
    for (const part of ["success", "retries", "total"] as const)
      expect(item.cost[part]).toBeCloseTo(want.cost[part], 9);
  });
};

describe("GET /api/v1/usage", () => {
  test("by prompt (and day by default) the figures equal the sums of the runs", async () => {
    const byPrompt = await usage("?groupBy=prompt");
    expectSameUsage(byPrompt, await expectedUsage((run) => run.prompt.slug));
    expect(byPrompt.find((item) => item.key === "remote")).toMatchObject({
      runs: 1,
      failed: 1,
      completed: 0,
    });
    const today = new Date().toISOString().slice(0, 10);
    const byDay = await usage("");
    expectSameUsage(byDay, await expectedUsage((run) => run.createdAt.slice(0, 10)));
    expect(byDay.map((item) => item.key)).toContain(today);
  });

  test("by environment and by model; narrowed by environment and prompt", async () => {
    expectSameUsage(await usage("?groupBy=environment"), await expectedUsage((run) => run.environment));
    const byModel = await usage("?groupBy=model");
    expect(byModel.find((item) => item.key === "openai:gpt-4o-mini")).toMatchObject({ runs: 1, failed: 1 });
    expect(byModel.find((item) => item.key === "dev:echo")?.completed).toBeGreaterThanOrEqual(2);
    const all = await usage("?groupBy=prompt");
    expect(byModel.reduce((sum, item) => sum + item.runs, 0)).toBe(
      all.reduce((sum, item) => sum + item.runs, 0),
    );
    expect((await usage("?groupBy=prompt&environment=staging")).map((item) => [item.key, item.runs])).toEqual(
      [["alpha", 1]],
    );
    expect((await usage("?groupBy=environment&prompt=remote")).map((item) => [item.key, item.runs])).toEqual([
      ["production", 1],
    ]);
  });

  test("the range is [from, to): a range before the runs is empty; dates and date-times both work", async () => {
    expect(await usage("?from=2020-01-01&to=2020-02-01")).toEqual([]);
    const created = Date.parse(runs.v1.createdAt);
    const justAfter = new Date(created + 1).toISOString();
    const onlyV1 = await usage(
      `?groupBy=prompt&from=${encodeURIComponent(runs.v1.createdAt)}&to=${encodeURIComponent(justAfter)}`,
    );
    expect(onlyV1.map((item) => [item.key, item.runs])).toEqual([["alpha", 1]]);
    expect(
      await usage(`?from=${encodeURIComponent(justAfter)}&to=${encodeURIComponent(runs.v2.createdAt)}`),
    ).toEqual([]);
  });

  test("bad groupBy, dates, ranges and names are 400s", async () => {
    await expect400("/api/v1/usage?groupBy=week", "groupBy");
    await expect400("/api/v1/usage?from=yesterday", "from");
    await expect400("/api/v1/usage?to=2026-13-01", "to");
    await expect400("/api/v1/usage?from=2025-01-01&to=2026-06-01", "366");
    await expect400("/api/v1/usage?from=2026-02-01&to=2026-01-01", "after");
    await expect400("/api/v1/usage?region=eu", "region");
    await expect400("/api/v1/usage?groupBy=day&groupBy=prompt", "groupBy");
  });

  test("401 without a key; the other tenant sees only its own usage", async () => {
    const response = await api(server, "/api/v1/usage", { key: null });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toContain("Bearer");
    validate("/api/v1/usage", 401, await response.json());
    expect((await usage("?groupBy=prompt", other)).map((item) => [item.key, item.runs])).toEqual([
      ["alpha", 1],
    ]);
    const ours = await usage("?groupBy=prompt&prompt=alpha");
    expect(ours[0]!.runs).toBe((await ids("?prompt=alpha&limit=200")).length);
  });
});
