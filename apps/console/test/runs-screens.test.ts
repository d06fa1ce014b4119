/**
 * The runs, run detail and thread screens in Chromium against a real in-process Promptrun (the
 * scripted model at the wire level): what they show is what the API answers, pending runs change
 * state on screen, and the thread's stream is tailed live.
 */
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync } from "node:fs";
import { resolve } from "node:path";
import type { Page as ApiPage, PromptRun } from "@promptrun/contract";
import axe from "axe-core";
import type { Browser, Page } from "playwright-core";
import { formatCount, formatUsd } from "../src/components/figures.ts";
import { chromiumPath, launchChromium, openPage } from "./browser.ts";
import { type ConsoleHarness, startConsoleHarness } from "./dev-harness.ts";

// Browser tests wait for runs to stream and pages to follow them; `bun test` alone allows 5 s.
setDefaultTimeout(60_000);

if (!chromiumPath)
  console.warn("SKIPPING the console's browser tests: no Chromium binary (apt-get install -y chromium).");

const artifacts = resolve(import.meta.dir, "../test-artifacts");
/** An env var's value: the run uses it, the console never shows it. */
const BRAND_VALUE = "brand-secret-5d1e";

let harness: ConsoleHarness;
let browser: Browser;
let hookServer: ReturnType<typeof Bun.serve>;
const hookBodies: unknown[] = [];

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

const createRun = (slug: string, body: Record<string, unknown>) =>
  api<{ id: string; thread: string }>(`/prompts/${slug}/latest/runs`, { method: "POST", json: body });

async function waitForRun(
  id: string,
  done = (run: PromptRun) => run.status !== "pending",
): Promise<PromptRun> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const run = await api<PromptRun>(`/promptruns/${id}`);
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} still ${run.status}/${run.phase}`);
    await Bun.sleep(50);
  }
}

/** axe-core's serious and critical violations on the page as it is now. */
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

async function expectAccessible(page: Page, url: string, ready: (page: Page) => Promise<unknown>) {
  for (const viewport of [
    { width: 1280, height: 800 },
    { width: 390, height: 844 },
  ]) {
    await page.setViewportSize(viewport);
    await page.goto(url);
    await ready(page);
    expect(await seriousViolations(page)).toEqual([]);
    // Usable at phone width: wide tables scroll in their own box, the page does not.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(
      viewport.width,
    );
  }
  await page.setViewportSize({ width: 1280, height: 800 });
}

const rowOf = (page: Page, runId: string) => page.locator(`tr[data-run-id="${runId}"]`);

describe.skipIf(!chromiumPath)("runs, run detail and thread screens", () => {
  beforeAll(async () => {
    mkdirSync(artifacts, { recursive: true });
    hookServer = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      async fetch(request) {
        hookBodies.push(await request.json());
        return new Response(null, { status: 202 });
      },
    });
    harness = await startConsoleHarness({
      // The webhook receiver is a local server: a private address.
      config: { allowPrivateUrls: true },
      prompts: [
        {
          slug: "greet",
          inputs: { name: { type: "string" } },
          messages: [{ role: "user", content: "Say hello to {{name}}." }],
          tags: ["production"],
        },
        {
          slug: "orders",
          inputs: { question: { type: "string" } },
          messages: [{ role: "user", content: "{{question}}" }],
          tools: [
            {
              type: "function",
              name: "lookup_order",
              description: "Look an order up by its number.",
              parameters: {
                type: "object",
                properties: { number: { type: "string" } },
                required: ["number"],
              },
            },
          ],
        },
        {
          slug: "ask-docs",
          inputs: { question: { type: "string" } },
          retrieval: { knowledgeBase: "manuals", query: "{{question}}", topK: 2, mode: "keyword" },
          messages: [{ role: "user", content: "Sources:\n{{retrieval}}\n\nQuestion: {{question}}" }],
        },
        {
          slug: "chat",
          inputs: { text: { type: "string" } },
          messages: [{ role: "user", content: "{{text}}" }],
        },
        {
          slug: "signed",
          inputs: { text: { type: "string" } },
          messages: [
            { role: "system", content: "Sign as {{env.BRAND}}." },
            { role: "user", content: "{{text}}" },
          ],
        },
      ],
    });
    browser = await launchChromium();
  });
  afterEach(() => harness.promptrun.script.reset());
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
    hookServer?.stop(true);
  });

  test("the runs table lists runs with their cost; the status filter narrows it, in the URL", async () => {
    const first = await createRun("greet", { inputs: { name: "Ada" } });
    const second = await createRun("greet", { inputs: { name: "Grace" }, environment: "production" });
    const [one, two] = await Promise.all([waitForRun(first.id), waitForRun(second.id)]);
    // The scripted failure answers the next model request: only this run's.
    harness.promptrun.script.fail(400, { message: "the model refused" });
    const bad = await waitForRun((await createRun("greet", { inputs: { name: "Linus" } })).id);
    expect([one.status, two.status, bad.status]).toEqual(["completed", "completed", "failed"]);

    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs`);
    await rowOf(page, one.id).waitFor();
    for (const run of [one, two]) {
      const row = rowOf(page, run.id);
      expect(await row.locator("td").nth(1).textContent()).toBe("greet@v1");
      expect(await row.locator("td").nth(2).textContent()).toBe("completed");
      expect(await row.locator("td").nth(4).textContent()).toContain(formatCount(run.tokenUsage!.total));
      expect(await row.locator("td").nth(5).textContent()).toBe(formatUsd(run.cost!.total));
      expect(await row.locator(`a[href="/console/threads/${run.thread}"]`).count()).toBe(1);
    }
    expect(await rowOf(page, bad.id).locator("td").nth(2).textContent()).toBe("failed");

    await page.getByLabel("Status").selectOption("failed");
    await page.waitForURL(/status=failed/);
    await rowOf(page, one.id).waitFor({ state: "detached" });
    expect(await page.locator("tbody tr").count()).toBe(1);
    expect(await rowOf(page, bad.id).count()).toBe(1);

    // The URL is the view: opened afresh, it shows the same filtered list.
    await page.goto(`${harness.url}/console/runs?status=completed&prompt=greet&version=1`);
    await rowOf(page, one.id).waitFor();
    expect(await rowOf(page, bad.id).count()).toBe(0);
    expect(await page.getByLabel("Status").inputValue()).toBe("completed");
    // The version options load with the prompt's versions: the field shows "1" once they are there.
    const versionField = page.getByLabel("Version or tag");
    await versionField.locator('option[value="1"]').waitFor({ state: "attached" });
    expect(await versionField.inputValue()).toBe("1");

    // A tag is resolved to the version it points at.
    await page.getByLabel("Version or tag").selectOption("tag:production");
    await page.waitForURL(/tag=production/);
    await rowOf(page, two.id).waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  test("an API error is shown where it happened, and an empty list says what to do", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs?thread=not-a-uuid`);
    const alert = page.getByRole("alert");
    await alert.waitFor();
    expect(await alert.textContent()).toContain("thread");
    await page.goto(`${harness.url}/console/runs?prompt=chat&status=failed`);
    await page.getByText("No run matches these filters").waitFor();
    expect(errors).toEqual([]);
    await page.close();
  });

  test("a pending run turns completed on screen without a reload", async () => {
    harness.promptrun.script.reply("one two three four five six seven eight", { tokenDelayMs: 300 });
    const created = await createRun("greet", { inputs: { name: "Barbara" } });
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs`);
    const status = rowOf(page, created.id).locator("td").nth(2);
    await status.waitFor();
    expect(await status.textContent()).toMatch(/^pending/);
    await page.evaluate(() => {
      (window as unknown as { marker: number }).marker = 1;
    });
    await page.waitForFunction(
      (id) => document.querySelector(`tr[data-run-id="${id}"] td:nth-child(3)`)?.textContent === "completed",
      created.id,
      { timeout: 15_000 },
    );
    // Same document: the table changed in place.
    expect(await page.evaluate(() => (window as unknown as { marker?: number }).marker)).toBe(1);
    const run = await api<PromptRun>(`/promptruns/${created.id}`);
    expect(await rowOf(page, created.id).locator("td").nth(5).textContent()).toBe(formatUsd(run.cost!.total));
    await page.screenshot({ path: resolve(artifacts, "runs.png") });
    await expectAccessible(page, `${harness.url}/console/runs`, (p) => rowOf(p, created.id).waitFor());
    expect(errors).toEqual([]);
    await page.close();
  });

  test("run detail: a paused run shows its required action, then its steps, tool results, cost split and webhook deliveries", async () => {
    const { script } = harness.promptrun;
    await harness.promptrun.promptrun.services.webhooks.create(harness.promptrun.tenantId, {
      environment: "production",
      url: `http://127.0.0.1:${hookServer.port}/hook`,
      events: ["run.requires_action", "run.completed"],
    });
    script.callTools([{ name: "lookup_order", arguments: { number: "A-1001" } }], { text: "Let me look." });
    script.reply("Order A-1001 has shipped.");
    const created = await createRun("orders", { inputs: { question: "Where is order A-1001?" } });
    const paused = await waitForRun(created.id, (run) => run.phase === "requires_action");
    const call = paused.requiredAction!.toolCalls[0]!;

    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs/${created.id}`);
    const action = page.getByRole("region", { name: "Waiting for tool outputs", exact: true });
    await action.waitFor();
    expect(await action.textContent()).toContain("lookup_order");
    expect(await action.textContent()).toContain("A-1001");
    expect(await page.locator("h1").textContent()).toContain("pending · requires_action");
    // Pending: the messages it would send now, its history not recorded yet.
    const pendingMessages = page.getByRole("region", { name: "Messages", exact: true });
    await pendingMessages.getByText("the messages it would send now", { exact: false }).waitFor();
    expect(await pendingMessages.textContent()).toContain("Where is order A-1001?");

    await api(`/promptruns/${created.id}/tool-outputs`, {
      method: "POST",
      json: { toolOutputs: [{ toolCallId: call.id, output: { status: "shipped", carrier: "DHL" } }] },
    });
    // The open page follows the run: no reload.
    await page.locator("h1 .badge-completed").waitFor({ timeout: 15_000 });
    const run = await api<PromptRun>(`/promptruns/${created.id}`);
    expect(run.steps).toHaveLength(2);
    await action.waitFor({ state: "detached" });

    const steps = page.getByRole("region", { name: "Steps", exact: true });
    const first = steps.getByRole("listitem", { name: "Step 1" });
    expect(await first.textContent()).toContain("tool-calls");
    expect(await first.textContent()).toContain("lookup_order");
    expect(await first.textContent()).toContain('"carrier": "DHL"');
    expect(await first.textContent()).toContain("executed by the client");
    const second = steps.getByRole("listitem", { name: "Step 2" });
    expect(await second.textContent()).toContain("Order A-1001 has shipped.");
    expect(await second.textContent()).toContain(formatUsd(run.steps[1]!.cost.total));

    const split = page.getByRole("table", { name: /^Cost of the run/ });
    const cells = async (row: string) =>
      split
        .getByRole("row", { name: new RegExp(`^${row}`) })
        .locator("td")
        .allTextContents();
    const { success, retries, total } = run.cost!;
    expect(await cells("Success")).toEqual(
      [success.input, success.cachedInput, success.output, success.webSearch, success.total].map(formatUsd),
    );
    expect(await cells("Retries")).toEqual(
      [retries.input, retries.cachedInput, retries.output, retries.webSearch, retries.total].map(formatUsd),
    );
    expect((await cells("Total")).at(-1)).toBe(formatUsd(total));
    expect(run.cost!.total).toBeGreaterThan(0);

    // The messages of the run's first model call: its user message (the tool call, its result and
    // the answer came from later calls, shown under Steps).
    const messages = page.getByRole("list", { name: "Messages sent to the model, in order" });
    await messages.getByText("Where is order A-1001?").waitFor();
    expect(await messages.getByRole("listitem").allTextContents()).toEqual([
      expect.stringMatching(/^user[\s\S]*Where is order A-1001\?$/),
    ]);
    expect(await messages.textContent()).not.toContain("Order A-1001 has shipped.");

    const deliveries = page.getByRole("region", { name: "Webhook deliveries", exact: true });
    await deliveries.getByRole("cell", { name: "run.completed" }).waitFor({ timeout: 20_000 });
    const rows = await deliveries.locator("tbody tr").allTextContents();
    expect(rows.some((row) => row.includes("run.requires_action") && row.includes("202"))).toBe(true);
    expect(rows.some((row) => row.includes("run.completed") && row.includes("202"))).toBe(true);
    expect(hookBodies.length).toBeGreaterThanOrEqual(2);

    await page.screenshot({ path: resolve(artifacts, "run-detail.png"), fullPage: true });
    await expectAccessible(page, `${harness.url}/console/runs/${created.id}`, (p) =>
      p
        .getByRole("region", { name: "Steps", exact: true })
        .getByRole("listitem", { name: "Step 2" })
        .waitFor(),
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  test("run detail: the messages sent, in order, the thread history marked, env values masked", async () => {
    const { promptrun } = harness;
    await promptrun.promptrun.services.environments.setEnvVars(promptrun.tenantId, "production", {
      BRAND: BRAND_VALUE,
    });
    const earlier = await createRun("chat", { inputs: { text: "hello there" }, channel: "signed" });
    await waitForRun(earlier.id);
    const created = await createRun("signed", {
      inputs: { text: "and again" },
      thread: earlier.thread,
      channel: "signed",
    });
    const run = await waitForRun(created.id);
    expect(run.memory).toEqual({ messages: 2, dropped: 0 });

    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs/${created.id}`);
    const messages = page.getByRole("list", { name: "Messages sent to the model, in order" });
    await messages.waitFor();
    expect(await messages.getByRole("listitem").allTextContents()).toEqual([
      expect.stringMatching(/^system[\s\S]*Sign as \[env:BRAND\]\.$/),
      expect.stringMatching(/^userfrom the thread[\s\S]*hello there$/),
      expect.stringMatching(/^assistantfrom the thread[\s\S]*hello there$/),
      expect.stringMatching(/^user[\s\S]*and again$/),
    ]);
    const section = page.getByRole("region", { name: "Messages", exact: true });
    expect(await section.textContent()).toContain("2 history messages from the thread");
    expect(await page.content()).not.toContain(BRAND_VALUE);
    await section.screenshot({ path: resolve(artifacts, "run-messages.png") });
    await expectAccessible(page, `${harness.url}/console/runs/${created.id}`, (p) =>
      p.getByRole("list", { name: "Messages sent to the model, in order" }).waitFor(),
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  test("run detail: the sources a run retrieved and the citations of its answer", async () => {
    await api("/knowledge-bases", { method: "POST", json: { slug: "manuals", embeddingModel: "dev:hash" } });
    const added = await api<{ id: string }>("/knowledge-bases/manuals/documents", {
      method: "POST",
      json: {
        text: "The lantern battery lasts nine hours on the brightest setting.",
        filename: "lantern.md",
      },
    });
    const deadline = Date.now() + 15_000;
    while (
      (await api<{ status: string }>(`/knowledge-bases/manuals/documents/${added.id}`)).status !== "ready"
    ) {
      if (Date.now() > deadline) throw new Error("the document was not ingested in 15 s");
      await Bun.sleep(50);
    }
    harness.promptrun.script.reply("It lasts nine hours [1].");
    const created = await createRun("ask-docs", {
      inputs: { question: "How long does the lantern battery last?" },
    });
    const run = await waitForRun(created.id);
    expect(run.citations.map((citation) => citation.filename)).toEqual(["lantern.md"]);

    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs/${created.id}`);
    const sources = page.getByRole("region", { name: "Sources", exact: true });
    await sources.waitFor();
    const search = sources.getByRole("region", { name: "Search 1: manuals", exact: true });
    expect(await search.textContent()).toContain("How long does the lantern battery last?");
    expect(await search.locator("tbody tr").count()).toBe(1);
    expect(await search.locator("tbody tr").textContent()).toContain("lantern.md");
    const citations = sources.getByRole("list", { name: "Citations", exact: true });
    expect(await citations.textContent()).toContain("[1] lantern.md");
    expect(await citations.locator("blockquote").textContent()).toContain(
      "The lantern battery lasts nine hours",
    );
    expect(errors).toEqual([]);
    await page.close();
  });

  test("run detail of an unknown run says so", async () => {
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs/0196a3c4-5b6d-7e8f-9a0b-1c2d3e4f5a6b`);
    expect(await page.getByRole("alert").textContent()).toContain("not found");
    expect(errors).toEqual([]);
    await page.close();
  });

  test("the thread screen shows the messages and tails a new run's tokens live", async () => {
    const { script } = harness.promptrun;
    const earlier = await createRun("chat", { inputs: { text: "hello there" }, channel: "support" });
    await waitForRun(earlier.id);

    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/threads`);
    await page.getByLabel("Thread id").fill("not-a-thread");
    await page.getByRole("button", { name: "Open thread" }).click();
    expect(await page.getByRole("alert").textContent()).toContain("UUID");
    await page.getByRole("link", { name: earlier.thread }).click();
    await page.waitForURL(new RegExp(`/console/threads/${earlier.thread}$`));

    // Its only channel is shown, with the run's exchange.
    const messages = page.getByRole("list", { name: "Messages of channel support, oldest first" });
    await messages.waitFor();
    expect(await messages.getByRole("listitem").allTextContents()).toEqual([
      expect.stringMatching(/^user[\s\S]*hello there$/),
      expect.stringMatching(/^assistant[\s\S]*hello there$/),
    ]);
    await page.getByText("Live: new events appear as they happen.").waitFor();

    const answer = "alpha beta gamma delta epsilon zeta eta theta";
    script.reply(answer, { tokenDelayMs: 200 });
    const next = await createRun("chat", {
      inputs: { text: "go on" },
      thread: earlier.thread,
      channel: "support",
    });
    const text = page.locator(`.live-run[data-run-id="${next.id}"] .live-run-text`);
    await text.waitFor();
    const seen: string[] = [];
    const deadline = Date.now() + 15_000;
    while (Date.now() < deadline) {
      seen.push((await text.textContent()) ?? "");
      if ((await page.locator(`.live-run[data-run-id="${next.id}"] .badge-live-completed`).count()) > 0)
        break;
      await Bun.sleep(100);
    }
    // Tokens arrived one after the other: the text was seen part-way.
    expect(seen.some((partial) => partial.startsWith("alpha") && partial.length < answer.length)).toBe(true);
    expect(await text.textContent()).toBe(answer);

    const log = await page.locator(".event-log .event-type").allTextContents();
    expect(log).toEqual(expect.arrayContaining(["ready", "run.started", "run.token", "run.completed"]));
    expect(log.indexOf("run.started")).toBeLessThan(log.indexOf("run.completed"));

    // The run's exchange joins the messages once it completes.
    await messages.getByText(answer).waitFor();
    expect(await messages.getByRole("listitem").count()).toBe(4);
    await page.screenshot({ path: resolve(artifacts, "thread.png") });
    await expectAccessible(page, `${harness.url}/console/threads/${earlier.thread}`, (p) =>
      p.getByText("Live: new events appear as they happen.").waitFor(),
    );
    await expectAccessible(page, `${harness.url}/console/threads`, (p) => p.getByRole("table").waitFor());
    expect(errors).toEqual([]);
    await page.close();
  });

  test("keyset pages: 'Load more' brings the next page by nextCursor", async () => {
    const all = await api<ApiPage<PromptRun>>("/promptruns?limit=200");
    const extra = Math.max(0, 51 - all.items.length);
    await Promise.all(
      Array.from({ length: extra }, (_, index) => createRun("chat", { inputs: { text: `page ${index}` } })),
    );
    const runs = await api<ApiPage<PromptRun>>("/promptruns?limit=200");
    await Promise.all(runs.items.map((run) => waitForRun(run.id)));
    const { page, errors } = await openPage(browser);
    await page.goto(`${harness.url}/console/runs`);
    await page.getByText("50 runs shown").waitFor();
    await page.getByRole("button", { name: "Load more" }).click();
    await page.getByText(`${runs.items.length} runs shown`).waitFor();
    const oldest = runs.items.at(-1)!;
    expect(await rowOf(page, oldest.id).count()).toBe(1);
    expect(await page.getByRole("button", { name: "Load more" }).count()).toBe(0);
    expect(errors).toEqual([]);
    await page.close();
  });
});
