import type { Clock, PendingCursor, RunRecord, Store } from "../ports.ts";
import type { SecretBox } from "../security/secret-box.ts";

/**
 * Re-encrypts, under the SecretBox's current key, every stored secret that an older key wrote:
 * environment env var values, webhook signing secrets, and the envVars of pending runs.
 * Values already under the current key are left alone, so running it twice is harmless.
 */
export async function rotateEncryption(
  store: Pick<Store, "environments" | "webhooks" | "runs">,
  secrets: SecretBox,
  clock: Clock,
): Promise<{ reEncrypted: number }> {
  let reEncrypted = 0;
  const reEncrypt = (ciphertext: string): string => {
    reEncrypted++;
    return secrets.encrypt(secrets.decrypt(ciphertext));
  };

  const staleEnvironmentIds = new Set(
    (await store.environments.allEncryptedValues())
      .filter((entry) => secrets.isStale(entry.value))
      .map((entry) => entry.environmentId),
  );
  for (const environmentId of staleEnvironmentIds) {
    // Writes the environment's whole map (fresh values unchanged), which is correct whether the
    // store merges or replaces on setEnvVars.
    const current = await store.environments.getEnvVars(environmentId);
    const rotated: Record<string, string> = {};
    for (const [key, value] of Object.entries(current)) {
      rotated[key] = secrets.isStale(value) ? reEncrypt(value) : value;
    }
    await store.environments.setEnvVars(environmentId, rotated, clock.now());
  }

  for (const webhook of await store.webhooks.allEncryptedSecrets()) {
    if (secrets.isStale(webhook.encryptedSecret)) {
      await store.webhooks.updateEncryptedSecret(webhook.id, reEncrypt(webhook.encryptedSecret));
    }
  }

  for await (const run of pendingRuns(store)) {
    if (run.encryptedEnvVars !== null && secrets.isStale(run.encryptedEnvVars)) {
      await store.runs.updateEncryptedEnvVars(run.id, reEncrypt(run.encryptedEnvVars));
    }
  }
  return { reEncrypted };
}

const PAGE = 1_000;

/** Every pending run, a page at a time (a deep backlog is never held in memory whole). */
async function* pendingRuns(store: Pick<Store, "runs">): AsyncGenerator<RunRecord> {
  yield* await store.runs.listPaused();
  for (const { tenantId, priority } of await store.runs.pendingOutline()) {
    let after: PendingCursor | null = null;
    for (;;) {
      const page = await store.runs.listPendingPage(tenantId, priority, after, PAGE);
      for (const { run } of page) yield run;
      const last = page.at(-1)?.run;
      if (!last || page.length < PAGE) break;
      after = { createdAt: last.createdAt, id: last.id };
    }
  }
}
