/**
 * Storage faults under a real server: another process holding SQLite's write lock for seconds
 * (the server keeps answering, writes wait and land, runs complete, no 5xx), and the disk filling
 * up mid-run on a 4 MB tmpfs (clean 503s with Retry-After, in-flight runs wait and complete once
 * space is back, the database passes integrity_check). Both are about the SQLite file: on
 * Postgres (PROMPTRUN_E2E_DATABASE=postgres) the file is skipped.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, mkdtempSync, openSync, rmSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { onPostgres } from "../support/data-set.ts";
import { api, startServer, type TestServer, waitForRun } from "../support/server.ts";
import { databasePathOf, discard } from "./support.ts";

if (onPostgres)
  console.log("storage-faults: SQLite's write lock and file on a full disk do not apply on Postgres");

const servers: TestServer[] = [];
afterAll(async () => {
  for (const server of servers) await discard(server).catch(() => {});
});

const integrityOf = (server: TestServer) => server.sql("PRAGMA integrity_check");

const startChat = async (server: TestServer, message: string) => {
  const response = await api(server, "/api/v1/prompts/chat/latest/runs", {
    method: "POST",
    json: { inputs: { message } },
  });
  expect(response.status).toBe(202);
  return ((await response.json()) as { id: string }).id;
};

/** Reads a child's stdout line by line; resolves each awaited line when it arrives. */
function lineReader(stream: ReadableStream<Uint8Array>) {
  const reader = stream.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  return async (expected: string): Promise<void> => {
    while (!buffer.split("\n").includes(expected)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`child ended before printing ${expected}`);
      buffer += decoder.decode(value, { stream: true });
    }
  };
}

describe.skipIf(onPostgres)("SQLite busy: another process holds the write lock", () => {
  test("reads answer during the lock, writes wait and land after it, in-flight runs complete, no 5xx", async () => {
    const server = await startServer();
    servers.push(server);
    const words = Array.from({ length: 30 }, (_, index) => `word${index}`).join(" ");
    const inFlight = [await startChat(server, words), await startChat(server, words)];

    const locker = Bun.spawn(
      ["bun", join(import.meta.dir, "hold-write-lock.ts"), databasePathOf(server), "3000"],
      {
        stdout: "pipe",
        stderr: "inherit",
      },
    );
    const waitForLine = lineReader(locker.stdout);
    await waitForLine("locked");
    let released = false;
    const releasedLine = waitForLine("released").then(() => {
      released = true;
    });

    // Creates issued while the lock is held.
    const creates = Array.from({ length: 5 }, (_, index) =>
      api(server, "/api/v1/prompts/greet/latest/runs", {
        method: "POST",
        json: { inputs: { name: `Locked ${index}` } },
      }),
    );
    // Reads and health are answered while the lock is still held: the event loop is not frozen.
    const health = await fetch(`${server.url}/health`);
    expect(health.status).toBe(200);
    const read = await api(server, `/api/v1/promptruns/${inFlight[0]}`);
    expect(read.status).toBe(200);
    expect(released).toBe(false);

    const responses = await Promise.all(creates);
    await releasedLine;
    expect(await locker.exited).toBe(0);
    expect(responses.map((response) => response.status)).toEqual([202, 202, 202, 202, 202]);
    const created = (await Promise.all(responses.map((response) => response.json()))) as Array<{
      id: string;
    }>;
    for (const id of [...inFlight, ...created.map((body) => body.id)]) {
      expect((await waitForRun(server, id, 30_000)).status).toBe("completed");
    }
    expect(await integrityOf(server)).toEqual([{ integrity_check: "ok" }]);
    expect(server.logs()).not.toContain('"level":50');
  }, 60_000);
});

/** The disk-full test needs a tiny tmpfs: root with mount rights (true on this machine kind and its CI). */
const canMountTmpfs = (() => {
  if (onPostgres) return false;
  const probe = mkdtempSync(join(tmpdir(), "promptrun-mount-probe-"));
  const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", probe], {
    stderr: "pipe",
  });
  if (mounted.exitCode === 0) {
    Bun.spawnSync(["umount", probe]);
    return true;
  }
  console.warn(
    `storage-faults: cannot mount a tmpfs here (${mounted.stderr.toString().trim()}): skipping the disk-full test`,
  );
  return false;
})();

describe.skipIf(!canMountTmpfs)("disk full during runs (tmpfs of 4 MB)", () => {
  test("creates get a clean 503, in-flight runs wait and complete once space is freed, integrity_check ok", async () => {
    const directory = mkdtempSync(join(tmpdir(), "promptrun-full-"));
    const mounted = Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", directory]);
    expect(mounted.exitCode, `mount failed: ${mounted.stderr.toString()}`).toBe(0);
    let server: TestServer | undefined;
    try {
      server = await startServer({ dataDir: directory });
      // Long enough outputs that their completion writes need fresh pages in the WAL, in few
      // words (the chat prompt streams one word per 30 ms): dev:echo echoes at most
      // DEV_ECHO_MAX_CHARS (16 KiB) of whole words.
      const message = `${"y".repeat(399)} `.repeat(40);
      const inFlight: string[] = [];
      for (let index = 0; index < 4; index++) inFlight.push(await startChat(server, message));

      // Fill what is left of the file system.
      const filler = join(directory, "filler");
      const descriptor = openSync(filler, "w");
      for (const size of [65_536, 4_096, 512, 1]) {
        const block = new Uint8Array(size);
        for (;;) {
          try {
            writeSync(descriptor, block);
          } catch {
            break;
          }
        }
      }
      closeSync(descriptor);

      for (let index = 0; index < 4; index++) {
        const refused = await api(server, "/api/v1/prompts/greet/latest/runs", {
          method: "POST",
          json: { inputs: { name: "y".repeat(200_000) } },
        });
        expect(refused.status).toBe(503);
        expect(Number(refused.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
        expect(await refused.json()).toEqual({
          error: "the database storage is full; retry later",
          code: "unavailable",
        });
      }
      // Reads still work, and the in-flight runs are still pending (not failed, not lost).
      await Bun.sleep(1_500);
      for (const id of inFlight) {
        const response = await api(server, `/api/v1/promptruns/${id}`);
        expect(response.status).toBe(200);
        expect(((await response.json()) as { status: string }).status).toBe("pending");
      }

      rmSync(filler);
      for (const id of inFlight) {
        const run = await waitForRun(server, id, 30_000);
        expect(run.status).toBe("completed");
        expect(String(run.output).length).toBeGreaterThan(15_000);
      }
      const after = await api(server, "/api/v1/prompts/greet/latest/runs", {
        method: "POST",
        json: { inputs: { name: "After" } },
      });
      expect(after.status).toBe(202);
      expect(await integrityOf(server)).toEqual([{ integrity_check: "ok" }]);
      const statuses = await server.sql<{ status: string; n: number }>(
        "select status, count(*) as n from runs group by status",
      );
      expect(statuses.every((row) => ["pending", "completed"].includes(row.status))).toBe(true);
    } finally {
      await server?.kill();
      Bun.spawnSync(["umount", directory]);
      rmSync(directory, { recursive: true, force: true });
    }
  }, 60_000);
});
