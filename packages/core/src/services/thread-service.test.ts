import { describe, expect, test } from "bun:test";
import { threadMessagesPageSchema, threadSchema } from "@promptrun/contract";
import type { MemoryMessage } from "../ports.ts";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture, greetPrompt } from "../testing/service-fixture.ts";
import { createThreadService } from "./thread-service.ts";

const THREAD = "0190f1f0-0000-7000-8000-0000000000aa";
const block = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };

describe("ThreadService", () => {
  test("groups the thread's completed exchanges per channel, oldest first", async () => {
    const { services, store, clock, createTenant } = createServiceFixture();
    const { tenant } = await createTenant("A");
    const { tenant: other } = await createTenant("B");
    await services.prompts.push(tenant.id, [greetPrompt]);
    const complete = async (channel: string, said: string) => {
      const { id } = await services.runs.create(tenant, "greet", "latest", {
        inputs: { name: said },
        thread: THREAD,
        channel,
      });
      clock.advance(1_000);
      await store.runs.complete(id, {
        output: `Hello ${said}`,
        tokenUsage: { input: 1, inputCached: 0, output: 2, reasoning: 0, total: 3 },
        cost: { success: block, retries: block, total: 0 },
        finishedAt: clock.now(),
        memory: [
          { role: "user", content: `Say hello to ${said}.` },
          { role: "assistant", content: `Hello ${said}` },
        ],
        deliveries: [],
        steps: [],
      });
      return id;
    };
    const first = await complete("default", "Ada");
    const second = await complete("support", "Bob");
    const third = await complete("default", "Cy");
    // A pending run adds nothing yet.
    await services.runs.create(tenant, "greet", "latest", { inputs: { name: "Dee" }, thread: THREAD });

    const thread = await services.threads.get(tenant.id, THREAD.toUpperCase());
    expect(thread.id).toBe(THREAD);
    expect(thread.createdAt).toBe("2030-01-01T00:00:00.000Z");
    expect(Object.keys(thread.channels).sort()).toEqual(["default", "support"]);
    expect(thread.channels.default!.map((message) => [message.role, message.content, message.runId])).toEqual(
      [
        ["user", "Say hello to Ada.", first],
        ["assistant", "Hello Ada", first],
        ["user", "Say hello to Cy.", third],
        ["assistant", "Hello Cy", third],
      ],
    );
    expect(thread.channels.support!.map((message) => message.runId)).toEqual([second, second]);
    expect(thread.channels.support![0]!.createdAt).toBe("2030-01-01T00:00:02.000Z");

    for (const [tenantId, threadId] of [
      [other.id, THREAD],
      [tenant.id, "0190f1f0-0000-7000-8000-0000000000ff"],
      [tenant.id, "nope"],
    ] as const) {
      const error = await rejection(services.threads.get(tenantId, threadId));
      expect([error.code, error.message]).toEqual(["not_found", `thread '${threadId}' not found`]);
    }
  });
});

describe("ThreadService tool exchanges", () => {
  test("a run's tool calls and results are shown in order: role tool in the thread, parts in its messages", async () => {
    const { services, store, clock, createTenant } = createServiceFixture();
    const { tenant } = await createTenant("A");
    await services.prompts.push(tenant.id, [greetPrompt]);
    const { id } = await services.runs.create(tenant, "greet", "latest", {
      inputs: { name: "Ada" },
      thread: THREAD,
    });
    const exchange: MemoryMessage[] = [
      { role: "user", content: "Where is order 42?" },
      {
        role: "assistant",
        content: "Let me look.",
        parts: [
          { type: "text", text: "Let me look." },
          { type: "tool-call", toolCallId: "call_1", name: "lookup_order", arguments: { number: "42" } },
        ],
      },
      {
        role: "tool",
        content: "",
        parts: [
          {
            type: "tool-result",
            toolCallId: "call_1",
            name: "lookup_order",
            output: { status: "shipped" },
            isError: false,
          },
        ],
      },
      { role: "assistant", content: "It has shipped." },
    ];
    clock.advance(1_000);
    await store.runs.complete(id, {
      output: "It has shipped.",
      tokenUsage: { input: 1, inputCached: 0, output: 2, reasoning: 0, total: 3 },
      cost: { success: block, retries: block, total: 0 },
      finishedAt: clock.now(),
      memory: exchange,
      deliveries: [],
      steps: [],
    });

    const thread = threadSchema.parse(await services.threads.get(tenant.id, THREAD));
    expect(thread.channels.default!.map((message) => [message.role, message.content, message.runId])).toEqual(
      exchange.map((message) => [message.role, message.content, id]),
    );
    const page = threadMessagesPageSchema.parse(await services.threads.messages(tenant.id, THREAD, {}));
    expect(
      page.items.map(({ role, content, parts }) => ({ role, content, ...(parts ? { parts } : {}) })),
    ).toEqual(exchange);
  });
});

describe("ThreadService paging", () => {
  test("pages of `limit` messages (default 50), bounded in bytes, each with a nextCursor until the last", async () => {
    const { services, store, clock, createTenant } = createServiceFixture();
    const { tenant } = await createTenant("A");
    await services.prompts.push(tenant.id, [greetPrompt]);
    for (let index = 0; index < 30; index++) {
      const { id } = await services.runs.create(tenant, "greet", "latest", {
        inputs: { name: String(index) },
        thread: THREAD,
      });
      clock.advance(1_000);
      await store.runs.complete(id, {
        output: `Hello ${index}`,
        tokenUsage: { input: 1, inputCached: 0, output: 2, reasoning: 0, total: 3 },
        cost: { success: block, retries: block, total: 0 },
        finishedAt: clock.now(),
        memory: [
          { role: "user", content: `Say hello to ${index}. ${"x".repeat(200)}` },
          { role: "assistant", content: `Hello ${index}` },
        ],
        deliveries: [],
        steps: [],
      });
    }
    const first = await services.threads.get(tenant.id, THREAD);
    expect(first.channels.default).toHaveLength(50);
    expect(first.nextCursor).not.toBeNull();
    const last = await services.threads.get(tenant.id, THREAD, { cursor: first.nextCursor, limit: 50 });
    expect(last.channels.default).toHaveLength(10);
    expect(last.nextCursor).toBeNull();
    expect(last.channels.default![0]!.content).toStartWith("Say hello to 25.");

    const maxPageBytes = 2_000;
    const bounded = createThreadService({ store, clock: { now: () => new Date() }, maxPageBytes });
    const contents: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page = await bounded.get(tenant.id, THREAD, { cursor, limit: 200 });
      const messages = page.channels.default ?? [];
      expect(messages.length).toBeGreaterThan(0);
      expect(Buffer.byteLength(JSON.stringify(messages))).toBeLessThanOrEqual(maxPageBytes);
      contents.push(...messages.map((message) => message.content));
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== null && pages < 100);
    expect(pages).toBeGreaterThan(1);
    expect(contents).toHaveLength(60);
    expect(contents[1]).toBe("Hello 0");
    expect(contents[59]).toBe("Hello 29");

    const error = await rejection(services.threads.get(tenant.id, THREAD, { cursor: "garbage", limit: 5 }));
    expect(error).toMatchObject({ code: "invalid" });
  });
});
