/**
 * A client tool end to end in a real browser (Debian's Chromium through playwright-core): the
 * keyless `order-status` prompt on dev:echo calls `lookup_order` (`/call <tool> <json>`), the run
 * pauses, useChat's `onToolCall` answers it with the page's own code, the example backend passes
 * the output on, and the run answers with it. Skips, saying so, when no Chromium is installed.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { createPromptrunClient } from "@promptrun/client";
import { startPromptrun, type TestPromptrun } from "@promptrun/testing";
import type { Browser, Page } from "playwright-core";
import { type ExampleServer, startExampleServer } from "./example-server.ts";
import { chromiumPath, launchChromium } from "./test-support/chromium.ts";
import { loadOrderStatusPrompt } from "./test-support/order-status-prompt.ts";

if (!chromiumPath) {
  console.warn(
    "SKIPPING the example's client-tool browser test: no Chromium binary (apt-get install -y chromium).",
  );
}
const artifacts = new URL("../test-artifacts/", import.meta.url).pathname;

let promptrun: TestPromptrun;
let example: ExampleServer;
let browser: Browser;
let page: Page;

describe.skipIf(!chromiumPath)("a client tool answered by the page, in Chromium", () => {
  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    promptrun = await startPromptrun({ prompts: [await loadOrderStatusPrompt()] });
    example = startExampleServer({
      promptrunUrl: promptrun.url,
      apiKey: promptrun.apiKey,
      prompt: { slug: "order-status", version: "latest" },
    });
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

  test("the run pauses, onToolCall answers in the browser, and the answer is built from the page's output", async () => {
    await page.locator('[data-testid="connection-status"][data-status="open"]').waitFor();
    await page.getByLabel("Message").fill('/call lookup_order {"number":"A-1001"}');
    await page.keyboard.press("Enter");

    const chip = page.locator('[data-testid="tool-call"][data-tool="lookup_order"]').first();
    await chip.waitFor();
    await page.locator('[data-testid="tool-call"][data-state="done"]').first().waitFor();
    const answer = page.locator('[data-role="assistant"][data-status="completed"]').first();
    await answer.waitFor();
    await page.screenshot({ path: `${artifacts}chat-client-tool.png`, fullPage: true });

    // dev:echo answers with the tool's output: what the page's own code returned.
    const text = (await answer.textContent()) ?? "";
    expect(text).toContain("Espresso machine");
    expect(text).toContain("checkedAt");

    // On the server: one run, two steps, the second fed by the browser's output (executed by the client).
    const client = createPromptrunClient({ baseUrl: promptrun.url, apiKey: promptrun.apiKey });
    const { items } = await client.runs.list({ prompt: "order-status" });
    expect(items).toHaveLength(1);
    const run = items[0]!;
    expect(run.status).toBe("completed");
    expect(run.steps).toHaveLength(2);
    expect(run.steps[0]!.toolResults).toMatchObject([
      {
        name: "lookup_order",
        isError: false,
        executedBy: "client",
        output: { number: "A-1001", status: "shipped" },
      },
    ]);
  });
});
