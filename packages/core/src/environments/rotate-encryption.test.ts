import { describe, expect, test } from "bun:test";
import { createSecretBox } from "../security/secret-box.ts";
import { addTenant, createMemoryStore, manualClock, pushPrompt } from "../testing/index.ts";
import { createEnvironmentService } from "./environment-service.ts";
import { loadEnvironmentVars } from "./load-environment-vars.ts";

const tenantId = "00000000-0000-4000-8000-00000000000a";
const oldSecret = "old-secret-0123456789abcdef0123456789abcdef";
const newSecret = "new-secret-0123456789abcdef0123456789abcdef";
const clock = manualClock();

const decryptsWith = (box: ReturnType<typeof createSecretBox>, ciphertext: string) => {
  try {
    box.decrypt(ciphertext);
    return true;
  } catch {
    return false;
  }
};

describe("rotateEncryption", () => {
  test("re-encrypts env vars, webhook secrets and pending runs' envVars under the new secret", async () => {
    const store = createMemoryStore();
    await addTenant(store, "acme", tenantId);
    const oldBox = createSecretBox(oldSecret);
    await createEnvironmentService({ store, secrets: oldBox, clock }).setEnvVars(tenantId, "production", {
      API_KEY: "sk-1",
      REGION: "eu",
    });
    const environment = (await store.environments.get(tenantId, "production"))!;
    await store.webhooks.create({
      id: crypto.randomUUID(),
      tenantId,
      environmentId: environment.id,
      environment: "production",
      url: "https://example.com/hook",
      encryptedSecret: oldBox.encrypt("whsec_old"),
      events: ["run.completed"],
      enabled: true,
      failureStreak: 0,
      createdAt: clock.now(),
    });
    const version = await pushPrompt(store, tenantId);
    const runBase = {
      tenantId,
      threadId: crypto.randomUUID(),
      channel: "default",
      promptId: version.promptId,
      promptVersionId: version.id,
      promptSlug: "greet",
      promptVersion: 1,
      priority: "normal" as const,
      environment: "production",
      inputs: {},
      metadata: {},
      createdAt: clock.now(),
    };
    const pendingId = crypto.randomUUID();
    await store.runs.create({
      ...runBase,
      id: pendingId,
      encryptedEnvVars: oldBox.encryptJson({ TOKEN: "t" }),
    });

    // The operator sets a new PROMPTRUN_SECRET and keeps the old one for decryption.
    const rotatingBox = createSecretBox(newSecret, [oldSecret]);
    const rotating = createEnvironmentService({ store, secrets: rotatingBox, clock });
    expect(await rotating.rotateEncryption()).toEqual({ reEncrypted: 4 });

    const newOnly = createSecretBox(newSecret);
    const oldOnly = createSecretBox(oldSecret);
    const ciphertexts = [
      ...Object.values(await store.environments.getEnvVars(environment.id)),
      ...(await store.webhooks.allEncryptedSecrets()).map((webhook) => webhook.encryptedSecret),
      (await store.runs.getById(pendingId))!.encryptedEnvVars!,
    ];
    expect(ciphertexts).toHaveLength(4);
    for (const ciphertext of ciphertexts) {
      expect(decryptsWith(newOnly, ciphertext)).toBe(true);
      expect(decryptsWith(oldOnly, ciphertext)).toBe(false);
    }
    expect(await loadEnvironmentVars(store, newOnly, tenantId, "production")).toEqual({
      API_KEY: "sk-1",
      REGION: "eu",
    });
    expect(newOnly.decrypt((await store.webhooks.allEncryptedSecrets())[0]!.encryptedSecret)).toBe(
      "whsec_old",
    );
    expect(newOnly.decryptJson((await store.runs.getById(pendingId))!.encryptedEnvVars!)).toEqual({
      TOKEN: "t",
    });

    // Nothing is stale any more: a second rotation changes nothing.
    expect(await rotating.rotateEncryption()).toEqual({ reEncrypted: 0 });
  });

  test("leaves values already under the current key untouched", async () => {
    const store = createMemoryStore();
    await addTenant(store, "acme", tenantId);
    const box = createSecretBox(newSecret, [oldSecret]);
    await createEnvironmentService({ store, secrets: box, clock }).setEnvVars(tenantId, "production", {
      A: "1",
    });
    const environment = (await store.environments.get(tenantId, "production"))!;
    const before = await store.environments.getEnvVars(environment.id);
    expect(await createEnvironmentService({ store, secrets: box, clock }).rotateEncryption()).toEqual({
      reEncrypted: 0,
    });
    expect(await store.environments.getEnvVars(environment.id)).toEqual(before);
  });
});
