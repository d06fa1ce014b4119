import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { Browser } from "playwright-core";
import { chromiumPath, launchChromium, openPage } from "./browser.ts";
import { type ConsoleHarness, startConsoleHarness } from "./dev-harness.ts";

if (!chromiumPath)
  console.warn("SKIPPING the console's browser tests: no Chromium binary (apt-get install -y chromium).");

let harness: ConsoleHarness;
let browser: Browser;

describe.skipIf(!chromiumPath)("console shell", () => {
  beforeAll(async () => {
    harness = await startConsoleHarness();
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("every navigation entry opens its screen, with no page error", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console`);
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    expect(new URL(page.url()).pathname).toBe("/console/playground");
    for (const label of [
      "Prompts",
      "Runs",
      "Workflow runs",
      "Threads",
      "Costs",
      "Webhooks",
      "Environments & keys",
      "Playground",
    ]) {
      // Exact names: "Runs" is also part of "Workflow runs".
      await page.getByRole("link", { name: label, exact: true }).click();
      await page.locator("h1").first().waitFor();
      expect(await page.getByRole("link", { name: label, exact: true }).getAttribute("aria-current")).toBe(
        "page",
      );
    }
    expect(errors).toEqual([]);
  });
});
