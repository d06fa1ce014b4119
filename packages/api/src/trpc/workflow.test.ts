import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { createTRPCClient, httpBatchLink, TRPCClientError } from "@trpc/client";
import { createTestApp, type TestApp } from "../http/test-app.ts";
import {
  createFakeWorkflowServices,
  type FakeWorkflowServices,
} from "../rest/workflows/testing/fake-workflow-services.ts";
import type { AppRouter } from "./index.ts";

type LinkFetch = NonNullable<Parameters<typeof httpBatchLink>[0]["fetch"]>;

let t: TestApp;
let fake: FakeWorkflowServices;

const clientWith = (key?: string) =>
  createTRPCClient<AppRouter>({
    links: [
      httpBatchLink({
        url: "http://localhost/trpc",
        headers: key === undefined ? {} : { authorization: `Bearer ${key}` },
        fetch: ((url: string | URL, init?: RequestInit) =>
          t.app.fetch(new Request(String(url), init))) as unknown as LinkFetch,
      }),
    ],
  });

/** The tRPC code and HTTP status of a call that must fail. */
async function failureOf(
  promise: Promise<unknown>,
): Promise<{ code: unknown; httpStatus: unknown; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TRPCClientError)
      return { code: error.data?.code, httpStatus: error.data?.httpStatus, message: error.message };
    throw error;
  }
  throw new Error("expected the call to fail");
}
const codeOf = async (promise: Promise<unknown>) => (await failureOf(promise)).code;

const triage = {
  slug: "triage",
  inputs: { ticket: { type: "string" as const } },
  steps: [{ id: "classify", prompt: "classify", inputs: { text: "{{inputs.ticket}}" } }],
  tags: ["production"],
};

beforeAll(async () => {
  t = await createTestApp({
    wrapServices: (services) => ({
      ...services,
      get workflows() {
        return fake.workflows;
      },
      get workflowRuns() {
        return fake.workflowRuns;
      },
    }),
  });
});
afterAll(async () => {
  await t.dispose();
});
beforeEach(() => {
  fake = createFakeWorkflowServices();
});

describe("tRPC workflow.*", () => {
  test("push, list, versions, get and tag for the caller's tenant; another tenant sees none of it", async () => {
    const a = clientWith(t.keys.a);
    expect(await a.workflow.push.mutate({ files: [triage] })).toEqual([
      expect.objectContaining({ slug: "triage", version: 1, created: true }),
    ]);
    expect(fake.calls[0]).toMatchObject({ method: "workflows.push", tenantId: t.tenants.a });
    await a.workflow.push.mutate({ files: [{ ...triage, description: "v2", tags: [] }] });
    expect((await a.workflow.list.query({ limit: 10 })).items).toEqual([
      expect.objectContaining({ slug: "triage", latestVersion: 2 }),
    ]);
    const versions = await a.workflow.versions.query({ slug: "triage", limit: 1 });
    expect(versions.items.map((version) => version.version)).toEqual([2]);
    expect(versions.nextCursor).not.toBeNull();
    expect((await a.workflow.get.query({ slug: "triage", version: "production" })).version).toBe(1);
    expect(await a.workflow.tag.mutate({ slug: "triage", tag: "production", version: 2 })).toMatchObject({
      version: 2,
    });
    expect(fake.calls.at(-1)).toMatchObject({
      method: "workflows.tag",
      args: ["triage", "production", { version: 2 }],
    });
    expect((await a.workflow.get.query({ slug: "triage", version: "production" })).version).toBe(2);

    const b = clientWith(t.keys.b);
    expect((await b.workflow.list.query({ limit: 10 })).items).toEqual([]);
    expect(await failureOf(b.workflow.get.query({ slug: "triage", version: "1" }))).toMatchObject({
      code: "NOT_FOUND",
      httpStatus: 404,
    });
    expect(await codeOf(b.workflow.tag.mutate({ slug: "triage", tag: "production", version: 1 }))).toBe(
      "NOT_FOUND",
    );
  });

  test("writes need a key and an active subscription; a bad file or input is BAD_REQUEST", async () => {
    expect(await codeOf(clientWith().workflow.push.mutate({ files: [triage] }))).toBe("UNAUTHORIZED");
    expect(await codeOf(clientWith(t.keys.inactive).workflow.push.mutate({ files: [triage] }))).toBe(
      "FORBIDDEN",
    );
    expect(
      await codeOf(clientWith(t.keys.inactive).workflow.tag.mutate({ slug: "triage", tag: "x", version: 1 })),
    ).toBe("FORBIDDEN");
    // Reads stay open to a lapsed subscription.
    expect((await clientWith(t.keys.inactive).workflow.list.query({ limit: 5 })).items).toEqual([]);
    const a = clientWith(t.keys.a);
    const badStep = { ...triage, steps: [{ id: "Bad Id", prompt: "x" }] };
    expect(await failureOf(a.workflow.push.mutate({ files: [badStep] }))).toMatchObject({
      code: "BAD_REQUEST",
      httpStatus: 400,
    });
    expect(await codeOf(a.workflow.push.mutate({ files: [] }))).toBe("BAD_REQUEST");
    expect(await codeOf(a.workflow.list.query({ limit: 0 }))).toBe("BAD_REQUEST");
    // Only the lapsed tenant's read reached the service.
    expect(fake.calls.map((call) => call.method)).toEqual(["workflows.list"]);
  });
});

describe("tRPC workflowRun.*", () => {
  beforeEach(async () => {
    await fake.workflows.push(t.tenants.a, [triage]);
    fake.calls.length = 0;
  });

  test("create → get → list → cancel; a second cancel is CONFLICT", async () => {
    const a = clientWith(t.keys.a);
    const created = await a.workflowRun.create.mutate({ slug: "triage", body: { inputs: { ticket: "hi" } } });
    expect(Object.keys(created).sort()).toEqual(["id", "thread"]);
    expect(fake.calls[0]).toMatchObject({
      method: "workflowRuns.create",
      args: ["triage", "latest", { inputs: { ticket: "hi" } }, undefined],
    });
    expect(await a.workflowRun.get.query({ id: created.id })).toMatchObject({
      id: created.id,
      status: "pending",
    });
    const page = await a.workflowRun.list.query({ workflow: "triage", version: 1, limit: 5 });
    expect(page.items.map((run) => run.id)).toEqual([created.id]);
    expect(fake.calls.at(-1)).toMatchObject({
      method: "workflowRuns.list",
      args: [
        { workflow: "triage", version: 1 },
        { cursor: null, limit: 5 },
      ],
    });
    expect(await a.workflowRun.cancel.mutate({ id: created.id })).toMatchObject({
      status: "failed",
      error: "cancelled",
    });
    expect(await failureOf(a.workflowRun.cancel.mutate({ id: created.id }))).toMatchObject({
      code: "CONFLICT",
      httpStatus: 409,
    });
  });

  test("idempotencyKey replays the same run; a malformed key is BAD_REQUEST unless the workflow is unknown", async () => {
    const a = clientWith(t.keys.a);
    const call = (body: unknown, idempotencyKey: string, slug = "triage") =>
      a.workflowRun.create.mutate({ slug, version: "1", body, idempotencyKey });
    const first = await call({ inputs: { ticket: "hi" } }, "order-7");
    expect(await call({ inputs: { ticket: "hi" } }, "order-7")).toEqual(first);
    expect(await codeOf(call({ inputs: { ticket: "other" } }, "order-7"))).toBe("CONFLICT");
    const badKey = "k".repeat(256);
    expect(await failureOf(call({ inputs: {} }, badKey))).toMatchObject({
      code: "BAD_REQUEST",
      message: expect.stringContaining("Idempotency-Key"),
    });
    expect(await codeOf(call({ inputs: {} }, badKey, "nope"))).toBe("NOT_FOUND");
    expect(fake.calls.filter((recorded) => recorded.method === "workflowRuns.create")).toHaveLength(3);
  });

  test("hostile: another tenant, a malformed id, a lapsed subscription, unknown list filters", async () => {
    const a = clientWith(t.keys.a);
    const b = clientWith(t.keys.b);
    const { id } = await a.workflowRun.create.mutate({ slug: "triage", body: { inputs: { ticket: "x" } } });
    expect(await codeOf(b.workflowRun.get.query({ id }))).toBe("NOT_FOUND");
    expect(await codeOf(b.workflowRun.cancel.mutate({ id }))).toBe("NOT_FOUND");
    expect(await codeOf(b.workflowRun.create.mutate({ slug: "triage", body: { inputs: {} } }))).toBe(
      "NOT_FOUND",
    );
    expect((await b.workflowRun.list.query({})).items).toEqual([]);
    for (const malformed of ["nope", "../x", `${id}0`]) {
      expect(await codeOf(a.workflowRun.get.query({ id: malformed }))).toBe("NOT_FOUND");
      expect(await codeOf(a.workflowRun.cancel.mutate({ id: malformed }))).toBe("NOT_FOUND");
    }
    expect(
      await codeOf(
        clientWith(t.keys.inactive).workflowRun.create.mutate({ slug: "triage", body: { inputs: {} } }),
      ),
    ).toBe("FORBIDDEN");
    expect(await codeOf(clientWith().workflowRun.create.mutate({ slug: "triage", body: {} }))).toBe(
      "UNAUTHORIZED",
    );
    const list = a.workflowRun.list.query as (input: unknown) => Promise<unknown>;
    expect(await codeOf(list({ prompt: "triage" }))).toBe("BAD_REQUEST");
    expect(await codeOf(list({ version: 1 }))).toBe("BAD_REQUEST");
    expect(await codeOf(list({ status: "running" }))).toBe("BAD_REQUEST");
    expect((await a.workflowRun.get.query({ id })).status).toBe("pending");
  });

  test("a stream token reads the workflow runs of its own thread only, and nothing else", async () => {
    const a = clientWith(t.keys.a);
    const { id, thread } = await a.workflowRun.create.mutate({
      slug: "triage",
      body: { inputs: { ticket: "x" } },
    });
    const tenant = await t.services.auth.authenticate(`Bearer ${t.keys.a}`);
    const own = clientWith((await t.services.streamTokens.issue(tenant, thread)).token);
    expect(await own.workflowRun.get.query({ id })).toMatchObject({ id, thread });
    const other = clientWith((await t.services.streamTokens.issue(tenant, crypto.randomUUID())).token);
    expect(await codeOf(other.workflowRun.get.query({ id }))).toBe("NOT_FOUND");
    expect(await codeOf(own.workflowRun.list.query({}))).toBe("UNAUTHORIZED");
    expect(await codeOf(own.workflowRun.cancel.mutate({ id }))).toBe("UNAUTHORIZED");
  });
});
