/**
 * The kit as an app outside this repository gets it: packs @promptrun/contract, client, react
 * and testing (scripts/kit/pack-kit.ts, which also checks every tarball: no TypeScript source,
 * no test files, no workspace:/catalog: versions), copies the Vite + React + TypeScript app of
 * ./consumer-app to a temporary directory, installs it with npm from the tarballs and the
 * registry, typechecks and builds it, runs its own `bun test` against @promptrun/testing, and
 * drives the built app in Debian Chromium against a real Promptrun: tokens arrive live, a
 * follow-up remembers the thread, with @promptrun/react's useChat and with the AI SDK's.
 *
 * Skips with one line when Chromium or the npm registry is not reachable. npm's cache is reused
 * between runs (the install dominates the runtime).
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { startPromptrun, type TestPromptrun } from "../../packages/testing/src/index.ts";
import { checkTarball } from "./check-tarball.ts";

const root = resolve(import.meta.dir, "..", "..");
const chromiumPath = [process.env.CHROMIUM_PATH, "/usr/bin/chromium", "/usr/bin/chromium-browser"].find(
  (path): path is string => Boolean(path && existsSync(path)),
);

/** Whether npm answers for a package within 20 s (no network, no registry: skip). */
function registryReachable(): boolean {
  const probe = Bun.spawnSync(["npm", "view", "react@19.3.1", "version"], {
    stdout: "pipe",
    stderr: "pipe",
    timeout: 20_000,
  });
  return probe.exitCode === 0;
}

const skipReason = !chromiumPath
  ? "no Chromium binary (apt-get install -y chromium)"
  : !registryReachable()
    ? "the npm registry is not reachable"
    : null;
if (skipReason) console.warn(`SKIPPING the installable-kit test: ${skipReason}.`);

const catalog = (
  JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as {
    workspaces: { catalog: Record<string, string> };
  }
).workspaces.catalog;

/** Runs a command to completion; returns its output, failing the test with it when the exit code is not 0. */
async function sh(command: string[], cwd: string, env: Record<string, string> = {}): Promise<string> {
  const child = Bun.spawn(command, { cwd, stdout: "pipe", stderr: "pipe", env: { ...process.env, ...env } });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  if (code !== 0) throw new Error(`${command.join(" ")} exited ${code}:\n${stdout}\n${stderr}`);
  return `${stdout}${stderr}`;
}

describe("the tarball check refuses what an app cannot install", () => {
  const made: string[] = [];
  afterAll(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });
  /** Packs `files` (path → content) under package/ like npm pack does. */
  async function tarballOf(files: Record<string, string>): Promise<string> {
    const dir = mkdtempSync(join(tmpdir(), "promptrun-kit-check-"));
    made.push(dir);
    for (const [path, content] of Object.entries(files)) {
      const file = join(dir, "package", path);
      await Bun.write(file, content);
    }
    await sh(["tar", "-czf", "kit.tgz", "package"], dir);
    return join(dir, "kit.tgz");
  }
  const manifest = (dependencies: Record<string, string>) => JSON.stringify({ name: "x", dependencies });

  test("a clean tarball passes", async () => {
    const tarball = await tarballOf({
      "package.json": manifest({ zod: "4.6.7" }),
      "dist/index.js": "",
      "dist/index.d.ts": "",
    });
    await checkTarball(tarball);
  });

  test("TypeScript source, test files and workspace:/catalog: versions are refused", async () => {
    const tarball = await tarballOf({
      "package.json": manifest({ "@promptrun/contract": "workspace:*", zod: "catalog:" }),
      "src/index.ts": "",
      "dist/index.test.js": "",
    });
    const error = await checkTarball(tarball).then(
      () => null,
      (caught: unknown) => String(caught),
    );
    expect(error).toContain("TypeScript source: package/src/index.ts");
    expect(error).toContain("test file: package/dist/index.test.js");
    expect(error).toContain("workspace: version");
    expect(error).toContain("catalog: version");
  });
});

let appDir: string;
let promptrun: TestPromptrun;
let appServer: ReturnType<typeof Bun.spawn> | undefined;
let appUrl: string;
let browser: Browser;

describe.skipIf(skipReason !== null)("the installable kit in a fresh app", () => {
  beforeAll(async () => {
    appDir = mkdtempSync(join(tmpdir(), "promptrun-kit-app-"));
    const packed = JSON.parse(
      (await sh(["bun", join(root, "scripts/kit/pack-kit.ts"), "--out", join(appDir, "tarballs")], root))
        .trim()
        .split("\n")
        .pop() ?? "{}",
    ) as { tarballs: Record<string, string> };
    cpSync(join(import.meta.dir, "consumer-app"), appDir, { recursive: true });
    const manifest = {
      name: "promptrun-kit-consumer",
      private: true,
      type: "module",
      dependencies: {
        ...Object.fromEntries(Object.entries(packed.tarballs).map(([name, path]) => [name, `file:${path}`])),
        "@ai-sdk/react": "4.0.177",
        ai: "7.0.173",
        "@tanstack/react-query": catalog["@tanstack/react-query"],
        "@trpc/client": catalog["@trpc/client"],
        "@trpc/server": catalog["@trpc/server"],
        react: catalog.react,
        "react-dom": catalog["react-dom"],
      },
      devDependencies: {
        "@types/bun": catalog["@types/bun"],
        "@types/react": "19.3.0",
        "@types/react-dom": "19.3.0",
        typescript: catalog.typescript,
        vite: "7.3.8",
      },
    };
    writeFileSync(join(appDir, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
    await sh(["npm", "install", "--no-audit", "--no-fund", "--prefer-offline", "--loglevel=error"], appDir);
  }, 900_000);

  afterAll(async () => {
    await browser?.close();
    appServer?.kill();
    await appServer?.exited;
    await promptrun?.stop();
    if (appDir) rmSync(appDir, { recursive: true, force: true });
  });

  test("the installed packages are built JavaScript with real versions", () => {
    for (const name of ["contract", "client", "react", "testing"]) {
      const installed = JSON.parse(
        readFileSync(join(appDir, "node_modules", "@promptrun", name, "package.json"), "utf8"),
      ) as { private?: boolean; dependencies?: Record<string, string> };
      expect(installed.private).toBeUndefined();
      for (const range of Object.values(installed.dependencies ?? {}))
        expect(range).not.toMatch(/^(workspace|catalog):/);
    }
  });

  test("the app typechecks with plain compiler options and builds with Vite", async () => {
    await sh(["npx", "tsc", "--noEmit", "-p", "."], appDir);
    await sh(["npx", "vite", "build", "--logLevel", "error"], appDir);
    expect(existsSync(join(appDir, "dist", "index.html"))).toBe(true);
  }, 300_000);

  test("the app's own bun test runs against @promptrun/testing", async () => {
    const output = await sh(["bun", "test", "--timeout", "60000"], appDir);
    expect(output).toMatch(/\b2 pass\b/);
    expect(output).toMatch(/\b0 fail\b/);
  }, 300_000);

  describe("in Chromium against a real Promptrun", () => {
    beforeAll(async () => {
      promptrun = await startPromptrun({
        prompts: [
          {
            slug: "chat",
            inputs: { message: { type: "string" } },
            messages: [
              { role: "system", content: "Be brief." },
              { role: "user", content: "{{message}}" },
            ],
          },
        ],
      });
      appServer = Bun.spawn(["bun", "server/main.ts"], {
        cwd: appDir,
        stdout: "pipe",
        stderr: "inherit",
        env: { ...process.env, PROMPTRUN_URL: promptrun.url, PROMPTRUN_API_KEY: promptrun.apiKey },
      });
      const reader = (appServer.stdout as ReadableStream<Uint8Array>).getReader();
      const { value } = await reader.read();
      reader.releaseLock();
      appUrl = (JSON.parse(new TextDecoder().decode(value)) as { url: string }).url;
      browser = await chromium.launch({
        executablePath: chromiumPath,
        args: [
          "--headless",
          "--no-sandbox",
          "--disable-gpu",
          "--disable-background-networking",
          "--disable-dev-shm-usage",
        ],
      });
    }, 120_000);

    /** Sends a slow scripted answer, sees part of it while it streams, then all of it; then a follow-up. */
    async function chatTwice(page: Page) {
      const answer = "Streaming works: every word arrives on its own, long before the run is done.";
      promptrun.script.reply(answer, { tokenDelayMs: 120 });
      await page.getByLabel("Message").fill("Show me streaming");
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        `(document.querySelector('[data-role="assistant"]')?.textContent ?? "").split(" ").length >= 3`,
        undefined,
        { timeout: 30_000 },
      );
      const partial = (await page.locator('[data-role="assistant"]').first().textContent()) ?? "";
      expect(partial.length).toBeLessThan(answer.length);
      expect(answer.startsWith(partial.trim())).toBe(true);
      await page
        .locator('[data-role="assistant"][data-status="completed"]')
        .first()
        .waitFor({ timeout: 30_000 });
      await page.waitForFunction(
        `document.querySelector('[data-role="assistant"]')?.textContent === ${JSON.stringify(answer)}`,
        undefined,
        { timeout: 30_000 },
      );

      promptrun.script.echo({ tokenDelayMs: 10 });
      const before = promptrun.script.requests.length;
      await page.getByLabel("Message").fill("And what did I ask first?");
      await page.keyboard.press("Enter");
      await page.waitForFunction(
        `[...document.querySelectorAll('[data-role="assistant"]')].at(1)?.textContent === "And what did I ask first?"`,
        undefined,
        { timeout: 30_000 },
      );
      const body = promptrun.script.requests[before]?.body as {
        messages: Array<{ role: string; content: unknown }>;
      };
      expect(body.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "user"]);
      expect(String(body.messages[1]?.content)).toBe("Show me streaming");
      expect(String(body.messages[2]?.content)).toBe(answer);
    }

    test("@promptrun/react's useChat: tokens arrive live, a follow-up remembers the thread", async () => {
      const page = await browser.newPage();
      page.on("pageerror", (error) => console.error("page error:", error.message));
      await page.goto(`${appUrl}/?variant=hooks`);
      await page.locator('[data-testid="status"][data-status="open"]').waitFor({ timeout: 30_000 });
      await chatTwice(page);
      await page.close();
    }, 120_000);

    test("the AI SDK's useChat over PromptrunChatTransport: the same", async () => {
      const page = await browser.newPage();
      page.on("pageerror", (error) => console.error("page error:", error.message));
      await page.goto(`${appUrl}/?variant=ai-sdk`);
      await page.locator('[data-testid="status"][data-status="ready"]').waitFor({ timeout: 30_000 });
      await chatTwice(page);
      await page.close();
    }, 120_000);
  });
});
