/**
 * RunService.messages over the memory store: a run's messages equal what render answered for it
 * just before it executed (render is the engine's own rendering), whatever the channel gets later.
 * The engine is the recording one, so a run "executes" by ending in the store as the engine ends it.
 */
import { describe, expect, test } from "bun:test";
import type { RenderedPrompt, RunMessages } from "@promptrun/contract";
import { DEFAULT_ENVIRONMENT } from "../environments/default-environment.ts";
import { rejection } from "../testing/rejection.ts";
import { createServiceFixture, greetPrompt } from "../testing/service-fixture.ts";

const SECRET_VALUE = "sk-live-very-secret-value";
const zeroBlock = { input: 0, cachedInput: 0, output: 0, webSearch: 0, total: 0 };

const keyedPrompt = {
  slug: "keyed",
  model: "dev:echo",
  inputs: { name: { type: "string" } },
  messages: [
    { role: "system", content: "Use {{env.SECRET}} and {{env.NEVER_SET}}." },
    { role: "user", content: "Hi {{name}}" },
  ],
} as const;

const windowedPrompt = {
  slug: "windowed",
  model: "dev:echo",
  memory: { maxMessages: 2 },
  inputs: { name: { type: "string" } },
  messages: [{ role: "user", content: "Hello {{name}}" }],
} as const;

const setup = async () => {
  const fixture = createServiceFixture();
  const { tenant } = await fixture.createTenant("A");
  const { tenant: other } = await fixture.createTenant("B");
  await fixture.services.prompts.push(tenant.id, [greetPrompt, keyedPrompt, windowedPrompt]);
  const environment = await fixture.store.environments.get(tenant.id, DEFAULT_ENVIRONMENT);
  if (!environment) throw new Error("no default environment");
  await fixture.store.environments.setEnvVars(
    environment.id,
    { SECRET: fixture.secrets.encrypt(SECRET_VALUE) },
    fixture.clock.now(),
  );
  const thread = crypto.randomUUID();

  /** Creates a run on the thread; returns it with what render answered for the same body then. */
  const createRun = async (slug: string, name: string, extra: Record<string, unknown> = {}) => {
    const body = { inputs: { name }, thread, ...extra };
    const rendered = await fixture.services.runs.render(tenant.id, slug, "latest", body);
    const { id } = await fixture.services.runs.create(tenant, slug, "latest", body);
    return { id, rendered };
  };

  /** Ends a run as the engine does: its window counted, its exchange appended to the channel. */
  const complete = async ({ id, rendered }: { id: string; rendered: RenderedPrompt }, answer: string) => {
    const own = rendered.messages.slice(-1)[0]!;
    const ended = await fixture.store.runs.complete(id, {
      output: answer,
      memoryWindow: rendered.memory,
      tokenUsage: { input: 1, inputCached: 0, output: 1, reasoning: 0, total: 2 },
      cost: { success: zeroBlock, retries: zeroBlock, total: 0 },
      finishedAt: fixture.clock.now(),
      memory: [
        { role: "user", content: String(own.content) },
        { role: "assistant", content: answer },
      ],
      deliveries: [],
      steps: [],
    });
    expect(ended).toBe(true);
  };
  return { ...fixture, tenant, other, thread, createRun, complete };
};

describe("RunService.messages", () => {
  test("a completed run: system messages, the exchanges it carried, its own; later exchanges never show", async () => {
    const { services, tenant, store, thread, clock, createRun, complete } = await setup();
    const first = await createRun("greet", "Ada");
    await complete(first, "Hi Ada");
    const second = await createRun("greet", "Grace");
    await complete(second, "Hi Grace");
    const expected: RunMessages = {
      messages: [
        { role: "system", content: "Greet people in a friendly tone." },
        { role: "user", content: "Say hello to Ada." },
        { role: "assistant", content: "Hi Ada" },
        { role: "user", content: "Say hello to Grace." },
      ],
      memory: { messages: 2, dropped: 0 },
    };
    expect(second.rendered.messages).toEqual(expected.messages);
    expect(await services.runs.messages(tenant.id, second.id)).toEqual(expected);
    expect(await services.runs.messages(tenant.id, first.id)).toEqual({
      messages: first.rendered.messages.slice(0, 2),
      memory: { messages: 0, dropped: 0 },
    });

    // The channel grows (a later run, an import): the answer for the second run stays the same.
    await complete(await createRun("greet", "Linus"), "Hi Linus");
    await store.runs.importMessages(
      tenant.id,
      thread,
      "default",
      [{ role: "user", content: "late" }],
      clock.now(),
    );
    expect(await services.runs.messages(tenant.id, second.id)).toEqual(expected);
    // Another channel of the thread is another history.
    const side = await createRun("greet", "Side", { channel: "side" });
    await complete(side, "Hi Side");
    expect((await services.runs.messages(tenant.id, side.id)).memory).toEqual({ messages: 0, dropped: 0 });
  });

  test("a windowed run carried only the newest whole exchanges its prompt allows", async () => {
    const { services, tenant, createRun, complete } = await setup();
    for (const name of ["one", "two", "three"])
      await complete(await createRun("windowed", name), `re ${name}`);
    const run = await createRun("windowed", "four");
    expect(run.rendered.memory).toEqual({ messages: 2, dropped: 4 });
    await complete(run, "re four");
    expect(await services.runs.messages(tenant.id, run.id)).toEqual({
      messages: [
        { role: "user", content: "Hello three" },
        { role: "assistant", content: "re three" },
        { role: "user", content: "Hello four" },
      ],
      memory: { messages: 2, dropped: 4 },
    });
  });

  test("a pending run: the history it would carry now, and memory null", async () => {
    const { services, tenant, createRun, complete } = await setup();
    await complete(await createRun("greet", "Ada"), "Hi Ada");
    const pending = await createRun("greet", "Grace");
    expect(await services.runs.messages(tenant.id, pending.id)).toEqual({
      messages: pending.rendered.messages,
      memory: null,
    });
    expect(pending.rendered.messages).toHaveLength(4);
  });

  test("env values are masked as render masks them, a name set nowhere too; the value never appears", async () => {
    const { services, tenant, createRun, complete } = await setup();
    const run = await createRun("keyed", "Ada", { envVars: { NEVER_SET: "request-secret" } });
    await complete(run, "ok");
    const answer = await services.runs.messages(tenant.id, run.id);
    expect(answer.messages).toEqual(run.rendered.messages);
    expect(answer.messages[0]).toEqual({ role: "system", content: "Use [env:SECRET] and [env:NEVER_SET]." });
    expect(JSON.stringify(answer)).not.toContain(SECRET_VALUE);
    expect(JSON.stringify(answer)).not.toContain("request-secret");
  });

  test("a run that ended before reading its memory (cancelled while queued) shows no history", async () => {
    const { services, tenant, createRun, complete } = await setup();
    await complete(await createRun("greet", "Ada"), "Hi Ada");
    const queued = await createRun("greet", "Grace");
    await services.runs.cancel(tenant.id, queued.id);
    expect(await services.runs.messages(tenant.id, queued.id)).toEqual({
      messages: [
        { role: "system", content: "Greet people in a friendly tone." },
        { role: "user", content: "Say hello to Grace." },
      ],
      memory: null,
    });
  });

  test("another tenant's run, an unknown id and a malformed one are the same not_found", async () => {
    const { services, tenant, other, createRun } = await setup();
    const { id } = await createRun("greet", "Ada");
    for (const [tenantId, runId] of [
      [other.id, id],
      [tenant.id, crypto.randomUUID()],
      [tenant.id, "not-a-uuid"],
    ] as const) {
      const error = await rejection(services.runs.messages(tenantId, runId));
      expect(error.code).toBe("not_found");
      expect(error.message).toBe(`run '${runId}' not found`);
    }
    expect((await services.runs.messages(tenant.id, id.toUpperCase())).memory).toBeNull();
  });
});
