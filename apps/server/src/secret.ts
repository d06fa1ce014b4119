import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";

/**
 * PROMPTRUN_SECRET when set; otherwise, for an embedded SQLite database, a secret generated on
 * first start and kept beside the database (mode 0600), so a dev install needs no set-up and
 * its encrypted values survive restarts.
 */
export function resolveSecret(
  configured: string | undefined,
  databaseUrl: string,
): { secret: string; source: string } {
  if (configured) return { secret: configured, source: "PROMPTRUN_SECRET" };
  if (databaseUrl === ":memory:")
    return { secret: randomBytes(32).toString("base64url"), source: "generated (in memory)" };
  if (!databaseUrl.startsWith("file:")) {
    throw new Error(
      "invalid configuration: PROMPTRUN_SECRET is required with a Postgres DATABASE_URL (every instance must share it)",
    );
  }
  const path = resolve(dirname(databaseUrl.slice("file:".length)), "promptrun.secret");
  if (existsSync(path)) {
    const stored = readFileSync(path, "utf8").trim();
    if (stored.length >= 32) return { secret: stored, source: path };
  }
  // Owner-only, like the database beside it (a directory made here for both).
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const secret = randomBytes(32).toString("base64url");
  writeFileSync(path, `${secret}\n`, { mode: 0o600 });
  chmodSync(path, 0o600);
  return { secret, source: `${path} (generated)` };
}
