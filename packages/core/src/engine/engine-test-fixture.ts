/**
 * Shared set-up for the engine's tests: a memory store with one tenant, one prompt version and a
 * production environment, a real event bus, and the real engine on the real clock.
 */
import type { Priority, PromptFileInput } from "@promptrun/contract";
import { promptFileSchema } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import { createInMemoryThreadEventBus } from "../events/in-memory-thread-event-bus.ts";
import type { DeliveredThreadEvent, RunRecord, Store } from "../ports.ts";
import { createSecretBox, type SecretBox } from "../security/secret-box.ts";
import { createMemoryStore } from "../testing/memory-store.ts";
import { createTestConfig, TEST_SECRET } from "../testing/test-config.ts";
import { createEngine, type EngineDeps } from "./engine.ts";

export interface FixtureOptions {
  prompt?: Partial<PromptFileInput>;
  config?: Partial<PromptrunConfig>;
  run?: Partial<PromptrunConfig["run"]>;
  /** Plaintext env vars of the production environment. */
  environmentEnv?: Record<string, string>;
  engine?: Partial<Omit<EngineDeps, "store" | "config" | "clock" | "events" | "secrets">>;
  /** Reuse a store (restart scenarios). */
  store?: Store;
}

export interface RunOptions {
  /** Another tenant (created on first use) running the same prompt version. */
  tenantId?: string;
  inputs?: Record<string, unknown>;
  thread?: string;
  channel?: string;
  priority?: Priority;
  envVars?: Record<string, string>;
  /** false: only insert the run (as if the process died before handing it to the engine). */
  enqueue?: boolean;
  /** Store run envVars encrypted on the record (what creation does for a resumable run). */
  encryptEnvVars?: boolean;
}

const realClock = { now: () => new Date() };
const defaultRunLimits = createTestConfig().run;

export async function createEngineFixture(options: FixtureOptions = {}) {
  const store = options.store ?? createMemoryStore();
  const secrets: SecretBox = createSecretBox(TEST_SECRET);
  const config = createTestConfig({
    allowPrivateUrls: true,
    ...options.config,
    run: {
      ...defaultRunLimits,
      maxAttempts: 3,
      attemptTimeoutMs: 20_000,
      idleTimeoutMs: 5_000,
      backoffBaseMs: 5,
      backoffMaxMs: 20,
      ...options.run,
    },
  });
  const events = createInMemoryThreadEventBus({ replayBufferSeconds: 60, clock: realClock });
  const tenantId = "tenant-1";
  const at = new Date();
  if (!(await store.tenants.get(tenantId))) {
    await store.tenants.create({ id: tenantId, name: "Tenant", subscriptionActive: true, createdAt: at });
  }
  const file = promptFileSchema.parse({
    slug: "chat",
    model: "openai:gpt-4o-mini",
    inputs: { message: { type: "string" } },
    messages: [
      { role: "system", content: "You are terse." },
      { role: "user", content: "{{message}}" },
    ],
    ...options.prompt,
  });
  const { slug, tags, ...definition } = file;
  const pushFor = async (owner: string) =>
    (
      await store.prompts.pushVersion({
        tenantId: owner,
        slug,
        definition,
        contentHash: JSON.stringify(definition),
        tags,
        newPromptId: Bun.randomUUIDv7(),
        newVersionId: Bun.randomUUIDv7(),
        at,
      })
    ).version;
  const version = await pushFor(tenantId);
  const versions = new Map([[tenantId, version]]);
  /** The prompt version of a tenant, creating the tenant and pushing the prompt on first use. */
  const versionOf = async (owner: string) => {
    let owned = versions.get(owner);
    if (!owned) {
      await store.tenants.create({ id: owner, name: owner, subscriptionActive: true, createdAt: at });
      await store.environments.ensure(owner, "production", Bun.randomUUIDv7(), at);
      owned = await pushFor(owner);
      versions.set(owner, owned);
    }
    return owned;
  };
  const environment = await store.environments.ensure(tenantId, "production", Bun.randomUUIDv7(), at);
  if (options.environmentEnv) {
    const encrypted = Object.fromEntries(
      Object.entries(options.environmentEnv).map(([key, value]) => [key, secrets.encrypt(value)]),
    );
    await store.environments.setEnvVars(environment.id, encrypted, at);
  }

  const engine = createEngine({ store, config, clock: realClock, events, secrets, ...options.engine });
  const received: Array<DeliveredThreadEvent & { thread: string }> = [];
  const subscribed = new Set<string>();
  const unsubscribers: Array<() => void> = [];

  const watchThread = (thread: string) => {
    if (subscribed.has(thread)) return;
    subscribed.add(thread);
    unsubscribers.push(
      events.subscribe(tenantId, thread, (event) => received.push({ ...event, thread })).unsubscribe,
    );
  };

  const createRun = async (runOptions: RunOptions = {}): Promise<RunRecord> => {
    const thread = runOptions.thread ?? Bun.randomUUIDv7();
    const runTenant = runOptions.tenantId ?? tenantId;
    if (runTenant === tenantId) watchThread(thread);
    const runVersion = await versionOf(runTenant);
    const id = Bun.randomUUIDv7();
    await store.runs.create({
      id,
      tenantId: runTenant,
      threadId: thread,
      channel: runOptions.channel ?? "default",
      promptId: runVersion.promptId,
      promptVersionId: runVersion.id,
      promptSlug: runVersion.slug,
      promptVersion: runVersion.version,
      priority: runOptions.priority ?? "normal",
      environment: "production",
      inputs: runOptions.inputs ?? { message: "hello there" },
      metadata: {},
      encryptedEnvVars:
        runOptions.envVars && runOptions.encryptEnvVars ? secrets.encryptJson(runOptions.envVars) : null,
      createdAt: new Date(),
    });
    const record = (await store.runs.getById(id))!;
    if (runOptions.enqueue !== false) {
      engine.enqueue(record, runOptions.encryptEnvVars ? undefined : runOptions.envVars);
    }
    return record;
  };

  /** Polls the store until the run has ended. */
  const waitForEnd = async (runId: string, timeoutMs = 10_000): Promise<RunRecord> => {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const run = await store.runs.getById(runId);
      if (run && run.status !== "pending") return run;
      await Bun.sleep(5);
    }
    throw new Error(`run ${runId} did not end within ${timeoutMs} ms`);
  };

  /**
   * Waits until the engine executes nothing. A run's end is visible in the store at its COMMIT; on
   * a SQLite file the engine lets the run go when the WAL flush resolves that write, a moment
   * later (docs/ARCHITECTURE.md "Durable commits off the event loop").
   */
  const waitForIdle = async (timeoutMs = 5_000): Promise<void> => {
    const deadline = Date.now() + timeoutMs;
    while (engine.stats().executing > 0) {
      if (Date.now() >= deadline) throw new Error(`the engine still executes runs after ${timeoutMs} ms`);
      await Bun.sleep(5);
    }
  };

  const eventsOf = (runId: string) =>
    received.filter((delivered) => "runId" in delivered.event.data && delivered.event.data.runId === runId);

  return {
    store,
    config,
    events,
    secrets,
    engine,
    tenantId,
    version,
    received,
    createRun,
    waitForEnd,
    waitForIdle,
    eventsOf,
    watchThread,
    async close() {
      for (const unsubscribe of unsubscribers) unsubscribe();
      await engine.stop({ graceMs: 0 });
      await events.close();
    },
  };
}

export type EngineFixture = Awaited<ReturnType<typeof createEngineFixture>>;

/** The text of the `messages` a fake provider received, as role: content pairs. */
export function sentMessages(body: unknown): Array<{ role: string; content: string }> {
  if (typeof body !== "object" || body === null || !("messages" in body) || !Array.isArray(body.messages))
    return [];
  const flatten = (content: unknown): string =>
    typeof content === "string"
      ? content
      : Array.isArray(content)
        ? content
            .map((part: unknown) =>
              typeof part === "object" && part !== null && "text" in part ? String(part.text) : "",
            )
            .join("")
        : "";
  const messages = (body.messages as Array<{ role: string; content: unknown }>).map((message) => ({
    role: message.role,
    content: flatten(message.content),
  }));
  // Anthropic carries the system prompt beside the messages.
  if ("system" in body && body.system !== undefined)
    return [{ role: "system", content: flatten(body.system) }, ...messages];
  return messages;
}
