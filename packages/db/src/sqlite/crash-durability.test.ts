import { afterEach, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { addTenant, pushPrompt } from "@promptrun/core/testing";
import { openSqliteStore } from "./open.ts";
import { createTempDirectory, type TempDirectory } from "./test-fixtures.ts";

describe("crash durability", () => {
  let directory: TempDirectory;
  afterEach(() => directory?.remove());

  test(
    "every run whose create() resolved survives a SIGKILL of the writer",
    async () => {
      directory = createTempDirectory();
      const path = join(directory.path, "crash.db");
      const seed = await openSqliteStore({ url: `file:${path}` });
      const tenant = await addTenant(seed);
      await pushPrompt(seed, tenant.id, "greet");
      await seed.close();

      const writer = Bun.spawn(
        ["bun", join(import.meta.dir, "test-crash-writer.ts"), path, tenant.id, "700"],
        {
          stdout: "pipe",
          stderr: "pipe",
        },
      );
      const [stdout, stderr] = await Promise.all([
        new Response(writer.stdout).text(),
        new Response(writer.stderr).text(),
        writer.exited,
      ]);
      expect(stderr).toBe("");
      expect(writer.signalCode).toBe("SIGKILL");
      const acknowledged = stdout.split("\n").filter((line) => line !== "");
      expect(acknowledged.length).toBeGreaterThanOrEqual(700);

      const reopened = await openSqliteStore({ url: `file:${path}` });
      try {
        const missing: string[] = [];
        for (const id of acknowledged) {
          const run = await reopened.runs.getById(id);
          if (run?.status !== "pending" || run.encryptedEnvVars !== "ciphertext-to-resume-with")
            missing.push(id);
        }
        expect(missing).toEqual([]);
        const pending = await reopened.runs.listPending();
        expect(pending.length).toBeGreaterThanOrEqual(acknowledged.length);
        expect(reopened.raw.query("PRAGMA integrity_check").get()).toEqual({ integrity_check: "ok" });
      } finally {
        await reopened.close();
      }
    },
    { timeout: 30_000 },
  );
});
