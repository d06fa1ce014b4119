/**
 * The playground in Chromium against a real in-process Promptrun (test/dev-harness.ts) and its
 * scripted model: tokens show while the run is still running, then status, usage and cost; a run
 * paused for a function tool completes once its output is typed; the form sends typed inputs
 * (numbers, JSON, an uploaded image as a data: URL); "save as new version" pushes an edit.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import type { Browser, Page } from "playwright-core";
import { chromiumPath, launchChromium, openPage } from "./browser.ts";
import { type ConsoleHarness, startConsoleHarness } from "./dev-harness.ts";

// A browser test takes seconds (`bun test` alone would stop it at 5 s).
setDefaultTimeout(60_000);

const artifacts = resolve(import.meta.dir, "../test-artifacts");
const axeSource = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

interface AxeResult {
  violations: Array<{ id: string; impact: string; nodes: Array<{ target: unknown[] }> }>;
}
interface Axe {
  run(context: Document): Promise<AxeResult>;
}

/** Serious and critical axe-core violations of the page as it is now (rule id and first target). */
async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axeSource });
  const violations = await page.evaluate(async () => {
    const axe = (window as unknown as { axe: Axe }).axe;
    const result = await axe.run(document);
    return result.violations.map((violation) => ({
      id: violation.id,
      impact: violation.impact,
      target: JSON.stringify(violation.nodes[0]?.target ?? []),
    }));
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map((violation) => `${violation.id} ${violation.target}`);
}

const api = async <T>(harness: ConsoleHarness, path: string): Promise<T> => {
  const response = await fetch(`${harness.promptrun.url}/api/v1${path}`, {
    headers: { authorization: `Bearer ${harness.promptrun.apiKey}` },
  });
  return (await response.json()) as T;
};

/** The status badge and the output, read in one go (so "partial text while running" is one moment). */
const statusAndOutput = (page: Page) =>
  page.evaluate(() => ({
    status: document.querySelector("[data-testid=run-status]")?.textContent ?? "",
    output: document.querySelector(".run-output")?.textContent ?? "",
  }));

// 1×1 PNG.
const PIXEL = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

if (!chromiumPath) console.warn("SKIPPING the playground's browser tests: no Chromium binary.");

describe.skipIf(!chromiumPath)("playground", () => {
  let harness: ConsoleHarness;
  let browser: Browser;

  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    harness = await startConsoleHarness({
      prompts: [
        {
          slug: "greet",
          description: "Greets someone",
          inputs: { name: { type: "string", description: "Who to greet" } },
          messages: [{ role: "user", content: "Say hello to {{name}}." }],
          tags: ["production"],
        },
        {
          slug: "weather",
          inputs: { city: { type: "string" } },
          messages: [{ role: "user", content: "What is the weather in {{city}}?" }],
          tools: [
            {
              type: "function",
              name: "get_weather",
              description: "The current weather of a city",
              parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
            },
          ],
        },
        {
          slug: "typed",
          inputs: {
            count: { type: "integer" },
            verbose: { type: "boolean", optional: true },
            filters: { type: "object" },
            photo: { type: "image" },
          },
          messages: [
            {
              role: "user",
              content: [
                { type: "text", text: "count={{count}} verbose={{verbose}} filters={{filters}}" },
                { type: "image", image: "{{photo}}" },
              ],
            },
          ],
        },
      ],
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("tokens show while the run is running; then status, usage and cost", async () => {
    const text = "The quick brown fox jumps over the lazy dog today";
    harness.promptrun.script.reply(text, { tokenDelayMs: 80 });
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/playground`);
    await page.getByLabel("Prompt", { exact: true }).selectOption("greet");
    await page.waitForURL(/\/console\/playground\/greet$/);
    await page.getByLabel("Version or tag").selectOption("production");
    await page.getByRole("textbox", { name: /^name/ }).fill("Ada");
    await page.getByRole("button", { name: "Run" }).click();

    // A moment with some, not all, of the text and the run still running.
    await page.waitForFunction(() =>
      (document.querySelector(".run-output")?.textContent ?? "").startsWith("The quick"),
    );
    const partial = await statusAndOutput(page);
    expect(partial.status).toBe("running");
    expect(text.startsWith(partial.output)).toBe(true);
    expect(partial.output.length).toBeLessThan(text.length);

    await page.getByTestId("run-status").getByText("completed").waitFor();
    expect((await statusAndOutput(page)).output).toBe(text);
    // 10 input tokens at $1 / M and 10 output tokens at $2 / M.
    expect(await page.getByTestId("run-usage").textContent()).toBe("10 in, 10 out, 20 total");
    expect(await page.getByTestId("run-cost").textContent()).toBe("$0.000030");
    expect(await page.locator(".steps").textContent()).toContain("Step 1: script:any, finished by stop");

    // The run was made for the version the tag names, with the typed input, in the thread shown.
    const runId = ((await page.locator("a[href^='/console/runs/'] code").textContent()) ?? "").trim();
    const run = await api<{
      prompt: { slug: string; version: number };
      thread: string;
      cost: { total: number };
    }>(harness, `/promptruns/${runId}`);
    expect(run.prompt).toMatchObject({ slug: "greet", version: 1 });
    expect(run.cost.total).toBeCloseTo(0.00003, 10);
    expect(await page.locator("a[href^='/console/threads/'] code").textContent()).toBe(run.thread);
    const lastRequest = harness.promptrun.script.requests.at(-1)?.body as {
      messages: Array<{ content: unknown }>;
    };
    expect(JSON.stringify(lastRequest.messages)).toContain("Say hello to Ada.");

    await page.screenshot({ path: `${artifacts}/playground.png` });
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });

  test("a run paused for a tool call completes once its output is typed", async () => {
    harness.promptrun.script.reset();
    harness.promptrun.script.callTools([{ name: "get_weather", arguments: { city: "Paris" } }]);
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/playground/weather`);
    await page.getByRole("textbox", { name: /^city/ }).fill("Paris");
    await page.getByRole("button", { name: "Run" }).click();

    const form = page.getByRole("form", { name: "The run waits for tool outputs" });
    await form.waitFor();
    expect(await page.getByTestId("run-status").textContent()).toBe("requires action");
    expect(await form.locator("pre").first().textContent()).toBe(JSON.stringify({ city: "Paris" }, null, 2));
    await page.getByLabel("Output of get_weather").fill('{"temperature": 21, "sky": "clear"}');
    await form.getByRole("button", { name: "Submit tool outputs" }).click();

    await page.getByTestId("run-status").getByText("completed").waitFor();
    await form.waitFor({ state: "detached" });
    // The scripted model echoes the tool result it was sent: the JSON typed above.
    expect((await statusAndOutput(page)).output).toBe('{"temperature":21,"sky":"clear"}');
    const steps = page.locator(".steps > li");
    expect(await steps.count()).toBe(2);
    const first = (await steps.nth(0).textContent()) ?? "";
    expect(first).toContain("finished by tool-calls");
    expect(first).toContain("Tool call get_weather");
    expect(first).toContain("Result, by the client:");
    expect(first).toContain('"temperature": 21');
    expect(await page.getByTestId("run-cost").textContent()).toMatch(/^\$0\.0000\d+$/);
    await page.screenshot({ path: `${artifacts}/playground-tool-call.png`, fullPage: true });
    expect(errors).toEqual([]);
  });

  test("the form sends typed inputs: an integer, a flag, JSON, and an uploaded image as a data: URL", async () => {
    harness.promptrun.script.reset();
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/playground/typed`);
    await page.getByLabel(/^count/).fill("3");
    await page.getByLabel(/^verbose/).check();
    await page.getByLabel(/^filters/).fill("{not json");
    await page.getByLabel("Upload an image for photo").setInputFiles({
      name: "pixel.png",
      mimeType: "image/png",
      buffer: PIXEL,
    });
    await page.getByText("Using pixel.png (1 KB), sent as a data: URL.").waitFor();
    await page.getByRole("button", { name: "Run" }).click();
    // Bad JSON is refused in the form: no run is made.
    await page.getByText(/^filters: not valid JSON/).waitFor();
    expect(await page.locator(".run-output").count()).toBe(0);

    const requestsBefore = harness.promptrun.script.requests.length;
    await page.getByLabel(/^filters/).fill('{"lang": "en"}');
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByTestId("run-status").getByText("completed").waitFor();
    expect((await statusAndOutput(page)).output).toBe('count=3 verbose=true filters={"lang":"en"}');
    const request = JSON.stringify(harness.promptrun.script.requests[requestsBefore]?.body);
    expect(request).toContain(`data:image/png;base64,${PIXEL.toString("base64")}`);
    expect(errors).toEqual([]);
  });

  test("an edit saved as a new version becomes the version the playground runs", async () => {
    harness.promptrun.script.reset();
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/playground/greet`);
    await page.getByText("Edit the prompt and save as a new version").click();
    const editor = page.getByRole("textbox", { name: /^Prompt file of greet/ });
    await editor.waitFor();
    await editor.click();
    await page.keyboard.press("ControlOrMeta+A");
    await page.keyboard.press("Delete");
    await page.keyboard.insertText(
      "slug: greet\nmodel: script:any\ninputs:\n  name:\n    type: string\nmessages:\n  - role: user\n    content: Bonjour {{name}}!\n",
    );
    await page.getByRole("button", { name: "Save as new version" }).click();
    await page.getByRole("status").filter({ hasText: "Saved as version 2 of greet." }).waitFor();
    await page.getByRole("heading", { name: /^Inputs of version 2/ }).waitFor();
    expect(await page.getByLabel("Version or tag").inputValue()).toBe("2");

    await page.getByRole("textbox", { name: /^name/ }).fill("Ada");
    await page.getByRole("button", { name: "Run" }).click();
    await page.getByTestId("run-status").getByText("completed").waitFor();
    expect((await statusAndOutput(page)).output).toBe("Bonjour Ada!");
    expect(errors).toEqual([]);
  });

  test("a run the server refuses says why, where the run would show", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/playground/typed`);
    await page.getByLabel(/^count/).fill("2");
    await page.getByLabel(/^filters/).fill("{}");
    await page.getByLabel(/^photo/).fill("file:///etc/passwd");
    await page.getByRole("button", { name: "Run" }).click();
    const refusal = page.getByRole("alert").filter({ hasText: "photo" });
    await refusal.waitFor();
    expect(await page.getByTestId("run-status").textContent()).toBe("failed");
    expect(errors).toEqual([]);
  });

  test("the playground has no serious accessibility violations on a phone-width screen", async () => {
    const { page, errors } = await openPage(browser, { width: 390, height: 844 });
    await page.goto(`${harness.url}/console/playground/typed`);
    await page.getByLabel(/^count/).waitFor();
    expect(await seriousViolations(page)).toEqual([]);
    expect(errors).toEqual([]);
  });
});
