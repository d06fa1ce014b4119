/**
 * A queue of pending runs built once per depth: a stopped server's data directory holding them,
 * copied for each measurement (copying a million-run database takes a second or two; writing it
 * through the store port again would take tens of seconds).
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type NewRun, uuidv7 } from "@promptrun/core";
import { openSqliteStore } from "@promptrun/db";
import { benchPrompts } from "./bench-prompts.ts";
import { startBenchServer } from "./bench-server.ts";
import type { PromptrunServer } from "./promptrun-server.ts";

/**
 * Concurrent creates, and the group commit's batch for the seeding store: one commit (one fsync)
 * per 4,096 runs instead of the server's 256 halves the time to write a million.
 */
const SEED_CONCURRENCY = 4096;

export interface SeededQueue {
  /** The stopped server's data directory, demo key and tenant: never started on, only copied. */
  template: Pick<PromptrunServer, "dataDir" | "apiKey" | "tenantId">;
  /** A second tenant's API key (its runs warm the server up). */
  warmUpApiKey: string;
  /** Seconds the store port took to write the pending runs. */
  seedSeconds: number;
}

/**
 * A stopped server's database with `heldRuns` runs of the gate prompt, then `echoRuns` dev:echo
 * runs, pending for the demo tenant (oldest first), and a warm-up tenant with the bench prompts.
 */
export async function seedQueue(options: {
  promptsDir: string;
  upstreamUrl: string;
  heldRuns: number;
  echoRuns: number;
}): Promise<SeededQueue> {
  const first = await startBenchServer({ promptsDir: options.promptsDir, upstreamUrl: options.upstreamUrl });
  try {
    const warmUp = await first.cli<{ tenant: { id: string }; apiKey: string }>(
      "tenants",
      "create",
      "warm-up",
    );
    await first.cli("prompts", "push", options.promptsDir, "--tenant", warmUp.tenant.id);
    await first.stop();
    const seedStarted = performance.now();
    await seedPendingRuns(`file:${join(first.dataDir, "promptrun.db")}`, first.tenantId, options);
    return {
      template: { dataDir: first.dataDir, apiKey: first.apiKey, tenantId: first.tenantId },
      warmUpApiKey: warmUp.apiKey,
      seedSeconds: (performance.now() - seedStarted) / 1000,
    };
  } catch (error) {
    await first.dispose(2_000);
    throw error;
  }
}

/** A fresh copy of the queue's data directory to start a server on (deleted when that server is disposed). */
export function copyQueue(queue: SeededQueue): SeededQueue["template"] {
  const dataDir = mkdtempSync(join(tmpdir(), "promptrun-bench-queue-"));
  cpSync(queue.template.dataDir, dataDir, { recursive: true });
  return { ...queue.template, dataDir };
}

export function removeQueue(queue: SeededQueue): void {
  rmSync(queue.template.dataDir, { recursive: true, force: true });
}

/** Writes the runs as pending rows through the store port, without holding them all in memory. */
async function seedPendingRuns(
  databaseUrl: string,
  tenantId: string,
  counts: { heldRuns: number; echoRuns: number },
): Promise<void> {
  const store = await openSqliteStore({ url: databaseUrl, maxBatch: SEED_CONCURRENCY });
  try {
    const version = async (slug: string) => {
      const found = await store.prompts.resolveVersion(tenantId, slug, { kind: "latest" });
      if (!found) throw new Error(`prompt ${slug} not found`);
      return found;
    };
    const gate = await version(benchPrompts.gate.slug);
    const echo = await version(benchPrompts.echo.slug);
    const total = counts.heldRuns + counts.echoRuns;
    const startMs = Date.now() - total - 1_000;
    const runFor = (index: number): NewRun => {
      const prompt = index < counts.heldRuns ? gate : echo;
      const createdAt = startMs + index;
      return {
        id: uuidv7(createdAt),
        tenantId,
        threadId: uuidv7(createdAt),
        channel: "default",
        promptId: prompt.promptId,
        promptVersionId: prompt.id,
        promptSlug: prompt.slug,
        promptVersion: prompt.version,
        priority: "normal",
        environment: "production",
        inputs: { message: "queued bench run" },
        metadata: {},
        encryptedEnvVars: null,
        createdAt: new Date(createdAt),
      };
    };
    // Concurrent creates share group commits; each worker builds its next run when it needs it.
    let next = 0;
    const worker = async () => {
      while (next < total) await store.runs.create(runFor(next++));
    };
    await Promise.all(Array.from({ length: Math.min(SEED_CONCURRENCY, total) }, worker));
  } finally {
    await store.close();
  }
}
