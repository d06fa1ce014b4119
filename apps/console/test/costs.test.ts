/**
 * The costs screen in Chromium against a real in-process Promptrun: its charts are drawn from
 * `GET /api/v1/usage`, its tables carry the API's numbers, and runs of a model without a price
 * are flagged.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { PromptRun, UsageResponse } from "@promptrun/contract";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { formatCount, formatUsd } from "../src/components/figures.ts";
import { rangeOf } from "../src/screens/usage-range.ts";
import { chromiumPath, launchChromium, openPage } from "./browser.ts";
import { type ConsoleHarness, startConsoleHarness } from "./dev-harness.ts";

// Browser tests wait for runs and charts; `bun test` alone allows 5 s.
setDefaultTimeout(60_000);

if (!chromiumPath)
  console.warn("SKIPPING the console's browser tests: no Chromium binary (apt-get install -y chromium).");

const artifacts = resolve(import.meta.dir, "../test-artifacts");

let harness: ConsoleHarness;
let browser: Browser;

const api = async <T>(path: string, init: RequestInit & { json?: unknown } = {}): Promise<T> => {
  const response = await fetch(`${harness.promptrun.url}/api/v1${path}`, {
    ...init,
    headers: { authorization: `Bearer ${harness.promptrun.apiKey}`, "content-type": "application/json" },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
};

/** Creates a run and waits until it has ended. */
async function endedRun(slug: string, body: Record<string, unknown>): Promise<PromptRun> {
  const { id } = await api<{ id: string }>(`/prompts/${slug}/latest/runs`, { method: "POST", json: body });
  const deadline = Date.now() + 15_000;
  for (;;) {
    const run = await api<PromptRun>(`/promptruns/${id}`);
    if (run.status !== "pending") return run;
    if (Date.now() > deadline) throw new Error(`run ${id} still pending`);
    await Bun.sleep(50);
  }
}

const usage = (groupBy: string, days: 7 | 30 | 90 = 30) => {
  const { from, to } = rangeOf(days);
  return api<UsageResponse>(`/usage?${new URLSearchParams({ groupBy, from, to })}`);
};

/** Pixels of a canvas that are not blank: the chart was drawn. */
const drawnPixels = (page: Page, index: number) =>
  page.evaluate((at) => {
    const canvas = document.querySelectorAll("canvas")[at] as HTMLCanvasElement;
    const { data } = canvas.getContext("2d")!.getImageData(0, 0, canvas.width, canvas.height);
    let drawn = 0;
    for (let alpha = 3; alpha < data.length; alpha += 4) if (data[alpha]! > 0) drawn += 1;
    return drawn;
  }, index);

async function seriousViolations(page: Page): Promise<string[]> {
  await page.addScriptTag({ content: axe.source });
  const violations = await page.evaluate(async () => {
    // biome-ignore lint/suspicious/noExplicitAny: axe is the global the script tag just added.
    const result = await (window as any).axe.run();
    return result.violations as { id: string; impact: string; nodes: { target: string[] }[] }[];
  });
  return violations
    .filter((violation) => violation.impact === "serious" || violation.impact === "critical")
    .map(
      (violation) => `${violation.id}: ${violation.nodes.map((node) => node.target.join(" ")).join(", ")}`,
    );
}

describe.skipIf(!chromiumPath)("costs screen", () => {
  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    const say = {
      inputs: { text: { type: "string" as const } },
      messages: [{ role: "user" as const, content: "{{text}}" }],
    };
    harness = await startConsoleHarness({
      prompts: [
        { slug: "alpha", ...say },
        { slug: "beta", ...say },
        // Same scripted endpoint, a model name with no price anywhere: its runs are unpriced.
        { slug: "gamma", ...say, model: "script:unpriced-model" },
      ],
    });
    const { promptrun, tenantId } = harness.promptrun;
    await promptrun.services.environments.setEnvVars(tenantId, "staging", { GREETING: "hello" });
    await endedRun("alpha", { inputs: { text: "one two three" } });
    await endedRun("alpha", { inputs: { text: "four five six seven eight" } });
    await endedRun("beta", { inputs: { text: "nine ten" }, environment: "staging" });
    await endedRun("gamma", { inputs: { text: "eleven twelve thirteen" } });
    harness.promptrun.script.fail(400, { message: "the model refused" });
    const failed = await endedRun("beta", { inputs: { text: "never answered" } });
    expect(failed.status).toBe("failed");
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("charts are drawn from the usage, and the per-prompt table holds the API's numbers", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/costs`);
    const table = page.getByRole("table", { name: "Usage per prompt" });
    await table.waitFor();

    const perPrompt = await usage("prompt");
    expect(perPrompt.items.map((item) => item.key)).toEqual(["alpha", "beta", "gamma"]);
    for (const item of perPrompt.items) {
      const row = table.locator(`tr[data-key="${item.key}"]`);
      expect(await row.locator("th").textContent()).toBe(item.key);
      expect(await row.locator("td").allTextContents()).toEqual([
        formatCount(item.runs),
        formatCount(item.completed),
        formatCount(item.failed),
        formatCount(item.tokenUsage.input),
        formatCount(item.tokenUsage.output),
        formatCount(item.tokenUsage.total),
        formatUsd(item.cost.success),
        formatUsd(item.cost.retries),
        formatUsd(item.cost.total),
        formatCount(item.unpricedRuns),
      ]);
    }
    const alpha = perPrompt.items.find((item) => item.key === "alpha")!;
    expect(alpha.runs).toBe(2);
    expect(alpha.cost.total).toBeGreaterThan(0);
    expect(perPrompt.items.find((item) => item.key === "gamma")!.unpricedRuns).toBe(1);

    // Four charts (day, prompt, model, environment), drawn, each with its text alternative.
    const charts = page.locator("canvas[role=img]");
    expect(await charts.count()).toBe(4);
    for (let index = 0; index < 4; index += 1) expect(await drawnPixels(page, index)).toBeGreaterThan(500);
    const labels = await charts.evaluateAll((nodes) =>
      nodes.map((node) => node.getAttribute("aria-label") ?? ""),
    );
    expect(labels[1]).toContain(
      `alpha: ${formatUsd(alpha.cost.total)}, ${formatCount(alpha.tokenUsage.total)} tokens`,
    );
    const perModel = await usage("model");
    expect(perModel.items.map((item) => item.key).sort()).toEqual(["script:any", "script:unpriced-model"]);
    expect(labels[2]).toContain("script:unpriced-model");
    const perEnvironment = await usage("environment");
    expect(perEnvironment.items.map((item) => item.key)).toEqual(["production", "staging"]);
    expect(
      await page.getByRole("table", { name: "Usage per environment" }).locator("tbody th").allTextContents(),
    ).toEqual(["production", "staging"]);

    // Unpriced runs are flagged with their number (the API's count, over the range).
    const perDay = await usage("day");
    const unpriced = perDay.items.reduce((sum, item) => sum + item.unpricedRuns, 0);
    expect(unpriced).toBeGreaterThanOrEqual(1);
    expect(await page.locator(".unpriced-runs").textContent()).toStartWith(
      `${unpriced} run${unpriced === 1 ? "" : "s"} without a known price`,
    );
    const total = perDay.items.reduce((sum, item) => sum + item.cost.total, 0);
    expect(await page.locator(".totals").textContent()).toContain(formatUsd(total));

    await page.screenshot({ path: resolve(artifacts, "costs.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  test("the range picker asks for 7, 30 or 90 days and keeps it in the URL", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/costs`);
    await page.getByRole("table", { name: "Usage per prompt" }).waitFor();
    const requested: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/api/v1/usage")) requested.push(request.url());
    });
    await page.getByLabel("Range").selectOption("7");
    await page.waitForURL(/days=7/);
    await page.getByRole("table", { name: "Usage per prompt" }).waitFor();
    const { from, to } = rangeOf(7);
    expect(requested.length).toBeGreaterThanOrEqual(4);
    for (const url of requested) {
      expect(new URL(url).searchParams.get("from")).toBe(from);
      expect(new URL(url).searchParams.get("to")).toBe(to);
    }
    // The day chart covers every day of the range, runs or not.
    const dayLabels = await page
      .getByRole("table", { name: "Usage per day (UTC)" })
      .locator("tbody th")
      .allTextContents();
    expect(dayLabels).toEqual((await usage("day", 7)).items.map((item) => item.key));
    expect(await page.locator("canvas[role=img]").first().getAttribute("aria-label")).toContain(
      rangeOf(7).days[0]!,
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  test("no serious accessibility violation, and no sideways page scroll, at 1280×800 and 390×844", async () => {
    const { page, errors } = await openPage(browser);
    for (const viewport of [
      { width: 1280, height: 800 },
      { width: 390, height: 844 },
    ]) {
      await page.setViewportSize(viewport);
      await page.goto(`${harness.url}/console/costs?days=90`);
      await page.getByRole("table", { name: "Usage per environment" }).waitFor();
      expect(await seriousViolations(page)).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
        viewport.width,
      );
    }
    expect(errors).toEqual([]);
    await page.close();
  });
});
