/**
 * The workflow runs list and a workflow run's page in Chromium against a real in-process
 * Promptrun: a workflow pushed over REST runs to the end and its graph shows every step completed
 * with the dependencies drawn; a node opens its step's run, whose page links back; a slow
 * workflow run is cancelled from its page. Needs the workflow REST routes and the tRPC procedures
 * `workflow.get`, `workflowRun.get|list|cancel` (docs/WORKFLOWS.md).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { WorkflowRun } from "@promptrun/contract";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { formatUsd } from "../src/components/figures.ts";
import { chromiumPath, launchChromium, openPage } from "./browser.ts";
import { type ConsoleHarness, startConsoleHarness } from "./dev-harness.ts";

setDefaultTimeout(60_000);

if (!chromiumPath)
  console.warn(
    "SKIPPING the console's workflow browser tests: no Chromium binary (apt-get install -y chromium).",
  );

let harness: ConsoleHarness;
let browser: Browser;

const api = async <T>(path: string, init: { method?: string; json?: unknown } = {}): Promise<T> => {
  const response = await fetch(`${harness.promptrun.url}/api/v1${path}`, {
    method: init.method ?? "GET",
    headers: { authorization: `Bearer ${harness.promptrun.apiKey}`, "content-type": "application/json" },
    body: init.json === undefined ? undefined : JSON.stringify(init.json),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
};

const echoPrompt = (slug: string, model: string) => ({
  slug,
  model,
  inputs: { text: { type: "string" } },
  messages: [{ role: "user", content: "{{text}}" }],
});

/** classify and detail run in parallel; answer needs both (one by `when`, both by its input). */
const triageWorkflow = {
  slug: "triage-demo",
  description: "Two echoes, then one that needs both.",
  inputs: { ticket: { type: "string" } },
  steps: [
    { id: "classify", prompt: "echo-a", inputs: { text: "kind of {{inputs.ticket}}" } },
    { id: "detail", prompt: "echo-a", inputs: { text: "details of {{inputs.ticket}}" } },
    {
      id: "answer",
      prompt: "echo-b",
      when: "steps.classify.status == 'completed'",
      inputs: { text: "{{steps.classify.output}} + {{steps['detail'].output}}" },
    },
  ],
  output: "{{steps.answer.output}}",
};

/** first streams slowly (dev:echo with a delay between words); then needs first. */
const slowWorkflow = {
  slug: "slow-demo",
  inputs: { text: { type: "string" } },
  steps: [
    { id: "first", prompt: "slow-echo", inputs: { text: "{{inputs.text}}" } },
    { id: "then", prompt: "echo-a", inputs: { text: "{{steps.first.output}}" } },
  ],
};

async function waitForWorkflowRun(id: string, done: (run: WorkflowRun) => boolean): Promise<WorkflowRun> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const run = await api<WorkflowRun>(`/workflowruns/${id}`);
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`workflow run ${id} still ${run.status}/${run.phase}`);
    await Bun.sleep(50);
  }
}

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

/** Both viewports: no serious axe violation, and the page itself never scrolls sideways. */
async function expectAccessible(page: Page, url: string, ready: (page: Page) => Promise<unknown>) {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    await page.setViewportSize(viewport);
    await page.goto(url);
    await ready(page);
    expect(await seriousViolations(page)).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      viewport.width,
    );
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

const node = (page: Page, step: string) => page.locator(`svg.workflow-graph [data-step-id="${step}"]`);

describe.skipIf(!chromiumPath)("workflow runs screens", () => {
  beforeAll(async () => {
    harness = await startConsoleHarness();
    await api("/prompts", { method: "POST", json: echoPrompt("echo-a", "dev:echo") });
    await api("/prompts", { method: "POST", json: echoPrompt("echo-b", "dev:echo") });
    await api("/prompts", {
      method: "POST",
      json: echoPrompt("slow-echo", harness.promptrun.script.modelRef),
    });
    await api("/workflows", { method: "POST", json: triageWorkflow });
    await api("/workflows", { method: "POST", json: slowWorkflow });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });

  test("a completed workflow run: in the list, its graph with every step completed and its dependencies; a node opens its run", async () => {
    const created = await api<{ id: string; thread: string }>("/workflows/triage-demo/latest/runs", {
      method: "POST",
      json: { inputs: { ticket: "printer on fire" } },
    });
    const run = await waitForWorkflowRun(created.id, (current) => current.status !== "pending");
    expect(run.status).toBe("completed");
    expect(run.steps.map((step) => step.status)).toEqual(["completed", "completed", "completed"]);

    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/workflow-runs`);
    const row = page.locator(`tr[data-workflow-run-id="${run.id}"]`);
    await row.waitFor();
    expect(await row.locator("td").nth(1).textContent()).toBe("triage-demo@v1");
    expect(await row.locator("td").nth(2).textContent()).toBe("completed");
    expect(await row.locator("td").nth(3).textContent()).toBe("3 of 3 ended");
    expect(await row.locator("td").nth(6).textContent()).toBe(formatUsd(run.cost!.total));
    // The status filter narrows the list, in the URL.
    await page.getByLabel("Status").selectOption("failed");
    await page.waitForURL(/status=failed/);
    await row.waitFor({ state: "detached" });
    await page.getByRole("button", { name: "Clear filters" }).click();
    await row.waitFor();

    await row.getByRole("link", { name: /^Workflow run / }).click();
    await page.waitForURL(new RegExp(`/console/workflow-runs/${run.id}$`));
    await page.getByRole("heading", { name: /^Workflow run / }).waitFor();
    for (const step of ["classify", "detail", "answer"]) {
      await node(page, step).and(page.locator('[data-step-status="completed"]')).waitFor();
      expect(await node(page, step).textContent()).toContain("completed");
      // A prompt step with a run is a link named by its text, described for screen readers.
      expect(await page.getByRole("link", { name: `${step} ✓ completed · prompt` }).count()).toBe(1);
      expect(await node(page, step).locator("desc").textContent()).toContain(
        `Step ${step}: prompt, completed`,
      );
    }
    // The edges come from the workflow version's expressions.
    await page.locator('path[data-edge="classify->answer"]').waitFor({ state: "attached" });
    expect(
      await page.locator("path.graph-edge").evaluateAll((paths) => paths.map((path) => path.dataset.edge)),
    ).toEqual(["classify->answer", "detail->answer"]);
    expect(await node(page, "answer").locator("desc").textContent()).toContain("after classify, detail");
    // Each step's output is listed under the graph.
    const answerStep = run.steps.find((step) => step.id === "answer")!;
    expect(answerStep.output).toBeTruthy();
    await page.getByRole("listitem", { name: "Step answer" }).getByText(answerStep.output!).waitFor();
    await page.getByRole("region", { name: "Output" }).getByText(run.output!).waitFor();
    expect(await page.getByRole("button", { name: "Cancel workflow run" }).count()).toBe(0);

    // A node is reached by keyboard and opens its step's prompt run; that page links back.
    const answerNode = page.getByRole("link", { name: "answer ✓ completed · prompt" });
    await answerNode.focus();
    await page.keyboard.press("Enter");
    await page.waitForURL(new RegExp(`/console/runs/${answerStep.runId}$`));
    await page.getByRole("link", { name: run.id.slice(-8) }).click();
    await page.waitForURL(new RegExp(`/console/workflow-runs/${run.id}$`));

    await expectAccessible(page, `${harness.url}/console/workflow-runs/${run.id}`, (current) =>
      node(current, "answer").waitFor(),
    );
    await expectAccessible(page, `${harness.url}/console/workflow-runs`, (current) =>
      current.locator(`tr[data-workflow-run-id="${run.id}"]`).waitFor(),
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  test("a pending workflow run changes on screen, and is cancelled from its page", async () => {
    const words = Array.from({ length: 60 }, (_, index) => `word${index}`).join(" ");
    // The first step streams for ~30 s, so it is surely running when the page opens and is cancelled.
    harness.promptrun.script.echo({ tokenDelayMs: 500 });
    const created = await api<{ id: string }>("/workflows/slow-demo/latest/runs", {
      method: "POST",
      json: { inputs: { text: words } },
    });
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/workflow-runs/${created.id}`);
    // Live: the first step starts running on screen without a reload.
    await node(page, "first").and(page.locator('[data-step-status="running"]')).waitFor();
    expect(await node(page, "then").getAttribute("data-step-status")).toBe("pending");

    await page.getByRole("button", { name: "Cancel workflow run" }).click();
    const dialog = page.getByRole("dialog", { name: /^Cancel workflow run / });
    await dialog.getByRole("button", { name: "Yes, cancel it" }).click();

    await node(page, "first").and(page.locator('[data-step-status="cancelled"]')).waitFor();
    await node(page, "then").and(page.locator('[data-step-status="cancelled"]')).waitFor();
    await page.getByRole("heading", { name: /^Workflow run .*failed$/ }).waitFor();
    // The run's own error (each cancelled step shows its error in the list too).
    await page.locator(".run-error", { hasText: "Error: cancelled" }).waitFor();
    expect(await page.getByRole("button", { name: "Cancel workflow run" }).count()).toBe(0);
    const ended = await api<WorkflowRun>(`/workflowruns/${created.id}`);
    expect([ended.status, ended.error]).toEqual(["failed", "cancelled"]);
    expect(ended.steps.map((step) => step.status)).toEqual(["cancelled", "cancelled"]);
    harness.promptrun.script.reset();
    expect(errors).toEqual([]);
    await page.close();
  });
});
