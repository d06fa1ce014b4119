/**
 * End to end in a real browser: Debian's Chromium driven by playwright-core (never a browser
 * download). Skips, saying so, when no Chromium binary is installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { startPromptrun, type TestPromptrun } from "@promptrun/testing";
import type { Browser, Page } from "playwright-core";
import { type ExampleServer, startExampleServer } from "./example-server.ts";
import { loadChatPrompt } from "./test-support/chat-prompt.ts";
import { chromiumPath, launchChromium } from "./test-support/chromium.ts";

if (!chromiumPath) {
  console.warn("SKIPPING the example's browser test: no Chromium binary (apt-get install -y chromium).");
}
const artifacts = new URL("../test-artifacts/", import.meta.url).pathname;

let promptrun: TestPromptrun;
let example: ExampleServer;
let browser: Browser;
let page: Page;

describe.skipIf(!chromiumPath)("example chat in Chromium", () => {
  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    promptrun = await startPromptrun({ prompts: [await loadChatPrompt()] });
    example = startExampleServer({ promptrunUrl: promptrun.url, apiKey: promptrun.apiKey });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 }, deviceScaleFactor: 1 });
    page.on("pageerror", (error) => console.error("page error:", error.message));
    await page.goto(example.url);
  });
  afterAll(async () => {
    await browser?.close();
    await example?.stop();
    await promptrun?.stop();
  });

  const answers = () => page.locator('[data-role="assistant"]');

  test("streams the answer live, then shows its usage and cost", async () => {
    await page.locator('[data-testid="connection-status"][data-status="open"]').waitFor();
    const answer = "Streaming works: every word arrives on its own, long before the run is done.";
    promptrun.script.reply(answer, { tokenDelayMs: 120 });

    await page.getByLabel("Message").fill("Show me streaming");
    await page.keyboard.press("Enter");
    await expect(page.locator('[data-role="user"]').first().textContent()).resolves.toBe("Show me streaming");

    // Part of the answer is on screen while the run is still streaming.
    const streaming = answers().first();
    await page.waitForFunction(
      `(document.querySelector('[data-role="assistant"][data-status="streaming"]')?.textContent ?? "").split(" ").length >= 3`,
    );
    const partial = (await streaming.textContent()) ?? "";
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(answer.length);
    expect(answer.startsWith(partial.trim())).toBe(true);
    await page.screenshot({ path: `${artifacts}chat-streaming.png` });

    await page.locator('[data-role="assistant"][data-status="completed"]').first().waitFor();
    expect(await streaming.textContent()).toBe(answer);
    const meta = (await page.locator('[data-testid="answer-meta"]').first().textContent()) ?? "";
    expect(meta).toContain("tokens out");
    expect(meta).toMatch(/\$0\.0000\d+/);
  });

  test("a follow-up on the same thread: the model sees the earlier exchange", async () => {
    promptrun.script.echo({ tokenDelayMs: 20 });
    const before = promptrun.script.requests.length;
    await page.getByLabel("Message").fill("And what did I ask first?");
    await page.keyboard.press("Enter");
    await page.locator('[data-role="assistant"][data-status="completed"]').nth(1).waitFor();
    const body = promptrun.script.requests[before]?.body as {
      messages: Array<{ role: string; content: unknown }>;
    };
    expect(body.messages.map((message) => message.role)).toEqual(["system", "user", "assistant", "user"]);
    expect(String(body.messages[1]?.content)).toBe("Show me streaming");
  });

  test("a failed run shows its error in the conversation", async () => {
    promptrun.script.fail(400, { message: "the model refused" });
    await page.getByLabel("Message").fill("This one fails");
    await page.keyboard.press("Enter");
    const failed = page.locator('[data-role="assistant"][data-status="failed"]').first();
    await failed.waitFor();
    expect(await page.locator('[data-testid="answer-error"]').first().textContent()).toBeTruthy();
    promptrun.script.reset();
    await page.screenshot({ path: `${artifacts}chat.png`, fullPage: true });
  });
});
