/**
 * The console as `promptrun serve` wires it: PROMPTRUN_CONSOLE, the public URL and the client
 * address reach the API; a real server on 127.0.0.1 over a SQLite file.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { silentLogger } from "@promptrun/api";
import { parseEnvironment } from "./env.ts";
import { type RunningServer, startServer } from "./server.ts";

const INDEX = "<!doctype html><title>console</title>";

let directory: string;
let server: RunningServer | null = null;

afterEach(async () => {
  await server?.stop({ graceMs: 0 });
  server = null;
  rmSync(directory, { recursive: true, force: true });
});

async function start(env: Record<string, string>, distDir?: string): Promise<RunningServer> {
  directory = mkdtempSync(join(tmpdir(), "promptrun-server-console-"));
  const config = parseEnvironment({
    PORT: "0",
    DATABASE_URL: `file:${join(directory, "promptrun.db")}`,
    PROMPTRUN_SEED_DEMO: "true",
    ...env,
  });
  server = await startServer(
    config.console && distDir ? { ...config, console: { distDir } } : config,
    silentLogger,
  );
  return server;
}

const signIn = (base: string, apiKey: string) =>
  fetch(`${base}/console/session`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey }),
  });

describe("promptrun serve and the console", () => {
  test("on by default: the build is served, the demo key signs in, the cookie reads the API", async () => {
    const dist = mkdtempSync(join(tmpdir(), "promptrun-dist-"));
    try {
      mkdirSync(join(dist, "assets"));
      writeFileSync(join(dist, "index.html"), INDEX);
      const running = await start({}, dist);
      const page = await fetch(`${running.url}/console/prompts`);
      expect(page.status).toBe(200);
      expect(await page.text()).toBe(INDEX);

      const signedIn = await signIn(running.url, running.demo!.apiKey);
      expect(signedIn.status).toBe(200);
      const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!;
      // PROMPTRUN_PUBLIC_URL unset: the bound http URL, so no Secure attribute.
      expect(signedIn.headers.get("set-cookie")).not.toContain("Secure");
      const prompts = await fetch(`${running.url}/api/v1/prompts`, {
        headers: { cookie, "x-promptrun-console": "1", origin: running.url },
      });
      expect(prompts.status).toBe(200);
      expect(((await prompts.json()) as { items: unknown[] }).items.length).toBeGreaterThan(0);
    } finally {
      rmSync(dist, { recursive: true, force: true });
    }
  });

  test("an https PROMPTRUN_PUBLIC_URL makes the cookie Secure and is the only Origin accepted", async () => {
    const running = await start({ PROMPTRUN_PUBLIC_URL: "https://promptrun.example.com" });
    const signedIn = await signIn(running.url, running.demo!.apiKey);
    expect(signedIn.headers.get("set-cookie")).toContain("; Secure");
    const cookie = (signedIn.headers.get("set-cookie") ?? "").split(";")[0]!;
    const read = (origin: string) =>
      fetch(`${running.url}/api/v1/prompts`, { headers: { cookie, "x-promptrun-console": "1", origin } });
    expect((await read("https://promptrun.example.com")).status).toBe(200);
    expect((await read(running.url)).status).toBe(403);
  });

  test("failed sign-ins are counted per client address: the 11th from 127.0.0.1 is 429", async () => {
    const running = await start({});
    for (let attempt = 1; attempt <= 10; attempt++) {
      expect((await signIn(running.url, `pr_live_${"q".repeat(43)}`)).status).toBe(401);
    }
    const refused = await signIn(running.url, running.demo!.apiKey);
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
  });

  test("PROMPTRUN_CONSOLE=false: /console, /console/* and /console/session are 404", async () => {
    const running = await start({ PROMPTRUN_CONSOLE: "false" });
    expect((await fetch(`${running.url}/console`)).status).toBe(404);
    expect((await fetch(`${running.url}/console/prompts`)).status).toBe(404);
    expect((await signIn(running.url, running.demo!.apiKey)).status).toBe(404);
    expect((await fetch(`${running.url}/console/session`, { method: "DELETE" })).status).toBe(404);
  });
});
