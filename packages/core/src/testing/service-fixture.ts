import type { PromptFileInput } from "@promptrun/contract";
import type { PromptrunConfig } from "../config.ts";
import { createTokenBucketRateLimiter } from "../rate-limit/token-bucket.ts";
import { createSecretBox } from "../security/secret-box.ts";
import { createStreamTokenService } from "../security/stream-tokens.ts";
import { createAuthService } from "../services/auth-service.ts";
import { createPromptService } from "../services/prompt-service.ts";
import { createRunService } from "../services/run-service.ts";
import { createTenantService } from "../services/tenant-service.ts";
import { createThreadService } from "../services/thread-service.ts";
import { manualClock } from "./clock.ts";
import { createMemoryStore } from "./memory-store.ts";
import { recordingEngine } from "./recording-engine.ts";
import { createTestConfig } from "./test-config.ts";

export const greetPrompt = {
  slug: "greet",
  model: "dev:echo",
  inputs: { name: { type: "string" }, tone: { type: "string", default: "friendly" } },
  messages: [
    { role: "system", content: "Greet people in a {{tone}} tone." },
    { role: "user", content: "Say hello to {{name}}." },
  ],
  tags: ["production"],
} satisfies PromptFileInput;

/** The application services over the memory store, a manual clock and a recording engine. */
export function createServiceFixture(overrides: Partial<PromptrunConfig> = {}) {
  const store = createMemoryStore();
  const clock = manualClock();
  const config = createTestConfig(overrides);
  const secrets = createSecretBox(config.secret);
  const engine = recordingEngine({ store, clock });
  const rateLimits = createTokenBucketRateLimiter({ rateLimit: config.rateLimit, clock });
  const services = {
    auth: createAuthService({ store }),
    tenants: createTenantService({ store, clock, quotas: config.quotas }),
    prompts: createPromptService({ store, clock, providers: config, quotas: config.quotas }),
    runs: createRunService({ store, config, clock, engine, secrets, rateLimits }),
    threads: createThreadService({ store, clock }),
    streamTokens: createStreamTokenService({ config, clock, rateLimits }),
    rateLimits,
  };

  /** A tenant with its API key and its record (what authenticate() returns). */
  const createTenant = async (name = "Acme", active = true) => {
    const { tenant, apiKey } = await services.tenants.create(name, { active });
    const record = await store.tenants.get(tenant.id);
    if (!record) throw new Error("tenant was not stored");
    return { tenant: record, apiKey };
  };

  return { store, clock, config, secrets, engine, rateLimits, services, createTenant };
}
