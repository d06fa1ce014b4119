import { beforeEach, describe, expect, test } from "bun:test";
import { PromptrunError } from "../errors.ts";
import type { Store } from "../ports.ts";
import { createSecretBox } from "../security/secret-box.ts";
import { addTenant, createMemoryStore, manualClock, TEST_SECRET } from "../testing/index.ts";
import { createEnvironmentService } from "./environment-service.ts";
import { loadEnvironmentVars } from "./load-environment-vars.ts";

const tenantA = "00000000-0000-4000-8000-00000000000a";
const tenantB = "00000000-0000-4000-8000-00000000000b";
const secrets = createSecretBox(TEST_SECRET);
const clock = manualClock();

const rejection = async (promise: Promise<unknown>): Promise<PromptrunError> => {
  try {
    await promise;
  } catch (error) {
    if (PromptrunError.isInstance(error)) return error;
    throw error;
  }
  throw new Error("expected a rejection");
};

let store: Store;
let service: ReturnType<typeof createEnvironmentService>;
beforeEach(async () => {
  store = createMemoryStore();
  await addTenant(store, "A", tenantA);
  await addTenant(store, "B", tenantB);
  service = createEnvironmentService({ store, secrets, clock });
});

const storedValues = async (tenantId: string, name: string) => {
  const environment = await store.environments.get(tenantId, name);
  return environment ? store.environments.getEnvVars(environment.id) : null;
};

describe("env vars", () => {
  test("are stored encrypted, listed by key only, and decrypted for the engine", async () => {
    const environment = await service.setEnvVars(tenantA, "staging", {
      OPENAI_API_KEY: "sk-test-secret-value",
      REGION: "eu",
    });
    expect(environment).toEqual({
      name: "staging",
      envVarKeys: ["OPENAI_API_KEY", "REGION"],
      createdAt: clock.now().toISOString(),
    });

    const stored = await storedValues(tenantA, "staging");
    expect(Object.keys(stored ?? {}).sort()).toEqual(["OPENAI_API_KEY", "REGION"]);
    expect(JSON.stringify(stored)).not.toContain("sk-test-secret-value");
    expect(secrets.decrypt(stored!.OPENAI_API_KEY!)).toBe("sk-test-secret-value");

    const listed = await service.list(tenantA);
    expect(listed).toEqual([environment]);
    expect(JSON.stringify(listed)).not.toContain("sk-test-secret-value");
    expect(await loadEnvironmentVars(store, secrets, tenantA, "staging")).toEqual({
      OPENAI_API_KEY: "sk-test-secret-value",
      REGION: "eu",
    });
  });

  test("a second set merges with the stored values; unset removes keys", async () => {
    await service.setEnvVars(tenantA, "production", { A: "1", B: "2" });
    await service.setEnvVars(tenantA, "production", { B: "two", C: "3" });
    expect(await loadEnvironmentVars(store, secrets, tenantA, "production")).toEqual({
      A: "1",
      B: "two",
      C: "3",
    });
    const environment = await service.unsetEnvVars(tenantA, "production", ["A", "MISSING"]);
    expect(environment.envVarKeys).toEqual(["B", "C"]);
    expect(await loadEnvironmentVars(store, secrets, tenantA, "production")).toEqual({ B: "two", C: "3" });
  });

  test("are scoped to the tenant", async () => {
    await service.setEnvVars(tenantA, "production", { SECRET: "a" });
    expect(await service.list(tenantB)).toEqual([]);
    expect(await loadEnvironmentVars(store, secrets, tenantB, "production")).toEqual({});
    expect((await rejection(service.unsetEnvVars(tenantB, "production", ["SECRET"]))).code).toBe("not_found");
    expect(await loadEnvironmentVars(store, secrets, tenantA, "production")).toEqual({ SECRET: "a" });
  });

  const tooMany = Object.fromEntries(Array.from({ length: 51 }, (_, index) => [`KEY_${index}`, "x"]));
  test.each([
    ["51 keys", tooMany, "at most 50"],
    ["65,537 bytes", { BIG: "x".repeat(65_536 - 2) }, "at most 65536 bytes"],
    ["a lowercase key", { lower_case: "x" }, "must be UPPER_CASE"],
    ["a non-string value", { NUMBER: 1 }, "must be strings"],
  ])("%s: rejected naming the rule, nothing stored", async (_, values, rule) => {
    const error = await rejection(service.setEnvVars(tenantA, "staging", values as Record<string, string>));
    expect(error.code).toBe("invalid");
    expect(error.message).toContain(rule);
    expect(error.message).toContain("staging");
    expect(await store.environments.get(tenantA, "staging")).toBeNull();
  });

  test("the limits apply to the environment after the merge, and a refused set changes nothing", async () => {
    const fifty = Object.fromEntries(Array.from({ length: 50 }, (_, index) => [`KEY_${index}`, "x"]));
    await service.setEnvVars(tenantA, "production", fifty);
    const error = await rejection(service.setEnvVars(tenantA, "production", { ONE_MORE: "x" }));
    expect(error.message).toContain("51 entries; at most 50");
    // Overwriting an existing key keeps the count and is fine.
    await service.setEnvVars(tenantA, "production", { KEY_0: "y" });

    // 4-byte characters: the size counts UTF-8 bytes, not string length.
    const bytes = await rejection(service.setEnvVars(tenantA, "production", { KEY_1: "😀".repeat(16_384) }));
    expect(bytes.message).toContain("bytes");
    const values = await loadEnvironmentVars(store, secrets, tenantA, "production");
    expect(Object.keys(values)).toHaveLength(50);
    expect(values.KEY_0).toBe("y");
    expect(values.KEY_1).toBe("x");
  });

  test("environment names follow the contract's pattern", async () => {
    expect((await rejection(service.ensure(tenantA, "Not Valid"))).code).toBe("invalid");
    expect((await rejection(service.setEnvVars(tenantA, "../x", { A: "1" }))).code).toBe("invalid");
    expect(await service.ensure(tenantA, "qa-2")).toMatchObject({ name: "qa-2", envVarKeys: [] });
  });

  test("loading an unknown environment is an error, except the default one", async () => {
    expect(await loadEnvironmentVars(store, secrets, tenantA, "production")).toEqual({});
    const error = await rejection(loadEnvironmentVars(store, secrets, tenantA, "nowhere"));
    expect(error.message).toBe("unknown environment 'nowhere'");
  });
});
