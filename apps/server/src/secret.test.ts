import { afterEach, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { resolveSecret } from "./secret.ts";

describe("resolveSecret", () => {
  let directory: string | undefined;
  afterEach(() => {
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  test("a generated secret is owner-only (0600), in an owner-only directory it creates, whatever the umask", () => {
    directory = mkdtempSync(join(tmpdir(), "promptrun-secret-"));
    const dataDir = join(directory, "data");
    const previousUmask = process.umask(0o022);
    try {
      const generated = resolveSecret(undefined, `file:${join(dataDir, "promptrun.db")}`);
      const path = join(dataDir, "promptrun.secret");
      expect(readFileSync(path, "utf8").trim()).toBe(generated.secret);
      expect(statSync(path).mode & 0o777).toBe(0o600);
      expect(statSync(dataDir).mode & 0o777).toBe(0o700);
      // Read back, not regenerated.
      expect(resolveSecret(undefined, `file:${join(dataDir, "promptrun.db")}`).secret).toBe(generated.secret);
    } finally {
      process.umask(previousUmask);
    }
  });
});
