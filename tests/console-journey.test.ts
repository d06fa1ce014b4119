/**
 * The whole web console journey of issue #19 against the real server (`promptrun serve`, SQLite or
 * Postgres + Redis with PROMPTRUN_E2E_DATABASE=postgres) in Debian's Chromium: sign in with the
 * demo key → edit `greet` and save version 2 → run it in the playground and see tokens before the
 * run ends → answer a client tool call → move `production` to version 2 → a REST run of
 * `greet/production` runs version 2 → the run in the runs list with its cost → a failed webhook
 * delivery redelivered → sign out, and the cookie no longer works. Screenshots of every screen
 * on the way (tests/support/console-browser.ts says where they go).
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import { formatUsd } from "../apps/console/src/components/figures.ts";
import {
  buildConsole,
  chromiumPath,
  launchChromium,
  openConsolePage,
  SKIP_WITHOUT_CHROMIUM,
  screenshot,
} from "./support/console-browser.ts";
import { CONSOLE_COOKIE } from "./support/console-session.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

// One test walks the whole journey: seconds of streaming, deliveries and page loads.
setDefaultTimeout(120_000);

if (!chromiumPath) console.warn(SKIP_WITHOUT_CHROMIUM);

/** greet's version 2: slower words (dev:echo waits `delayMs` between them) and a new text. */
const GREET_V2 = `slug: greet
description: Greets someone in a chosen tone.
model: dev:echo
params:
  delayMs: 150
inputs:
  name:
    type: string
  tone:
    type: string
    default: friendly
messages:
  - role: system
    content: Greet people in a {{tone}} tone.
  - role: user
    content: Good morning {{name}}, this greeting comes from version two of the prompt!
`;
const greeting = (name: string) =>
  `Good morning ${name}, this greeting comes from version two of the prompt!`;

// The page's globals that page.evaluate uses in the browser (tests/ is typed without the DOM).
declare const document: { querySelector(selector: string): { textContent: string | null } | null };

/** A webhook receiver on 127.0.0.1 that answers 500 to its first request and 200 after. */
function startFlakyReceiver() {
  const received: { webhookId: string | null; body: string }[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(request) {
      received.push({ webhookId: request.headers.get("webhook-id"), body: await request.text() });
      return received.length === 1
        ? new Response("receiver down", { status: 500 })
        : new Response("ok", { status: 200 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}/hooks/promptrun`, received, server };
}

/** The playground's status badge and output, read at one moment. */
const statusAndOutput = (page: Page) =>
  page.evaluate(() => ({
    status: document.querySelector("[data-testid=run-status]")?.textContent ?? "",
    output: document.querySelector(".run-output")?.textContent ?? "",
  }));

/** Replaces the text of the CodeMirror editor named `name`, as a user pastes it. */
async function replaceEditorText(page: Page, name: string, text: string) {
  await page.getByRole("textbox", { name }).click();
  await page.keyboard.press("ControlOrMeta+A");
  await page.keyboard.press("Delete");
  await page.keyboard.insertText(text);
}

/** The run id the playground links to (its run page). */
const playgroundRunId = async (page: Page) =>
  ((await page.locator("a[href^='/console/runs/'] code").textContent()) ?? "").trim();

/** What this test reads of a run (the contract's PromptRun). */
interface Run {
  id: string;
  status: string;
  thread: string;
  output: string | null;
  prompt: { slug: string; version: number };
  cost: { total: number } | null;
  steps: unknown[];
}

let server: TestServer;
let browser: Browser;
let receiver: ReturnType<typeof startFlakyReceiver>;

describe.skipIf(!chromiumPath)("the console journey on the real server", () => {
  beforeAll(async () => {
    buildConsole();
    receiver = startFlakyReceiver();
    server = await startServer({
      env: {
        // One attempt, then the next only in an hour: only the console's Redeliver sends it again.
        PROMPTRUN_WEBHOOK_RETRY_SCHEDULE: "3600",
        // dev:echo is free; a price makes the runs' cost something to see ($1000 / $2000 per million).
        PROMPTRUN_PRICES: JSON.stringify({ "dev:echo": { inputPerMillion: 1000, outputPerMillion: 2000 } }),
      },
    });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
    receiver?.server.stop(true);
  });

  // long-function: one journey, step by step, as the issue lists it; split, the steps would lose their order.
  test("sign in, edit, run live, answer a tool call, move production, REST run, runs list, redeliver, sign out", async () => {
    const { page, context, errors, close } = await openConsolePage(browser, server);

    // 1. Sign in on the sign-in page with the demo key.
    await page.goto(`${server.url}/console`);
    await page.getByRole("heading", { name: "Sign in to Promptrun" }).waitFor();
    await screenshot(page, "sign-in");
    await page.getByLabel("API key").fill(server.apiKey);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Console" }).waitFor();
    await page.waitForURL(/\/console\/playground$/);
    expect(await page.getByLabel("API key").count()).toBe(0);

    // 2. The prompts list, then greet: edit its YAML and save version 2.
    await page.getByRole("link", { name: "Prompts", exact: true }).click();
    await page.getByRole("row", { name: /order-status/ }).waitFor();
    await screenshot(page, "prompts");
    await page.getByRole("link", { name: "greet", exact: true }).click();
    await page.getByRole("heading", { name: "greet", level: 1 }).waitFor();
    await page.getByRole("textbox", { name: "Edit the prompt file" }).waitFor();
    await replaceEditorText(page, "Edit the prompt file", GREET_V2);
    await page.getByRole("button", { name: "Save as new version" }).click();
    await page.getByRole("status").filter({ hasText: "Saved as version 2 of greet." }).waitFor();
    const saved = (await (await api(server, "/api/v1/prompts/greet/2")).json()) as {
      params: unknown;
      messages: Array<{ content: string }>;
    };
    expect(saved.params).toEqual({ delayMs: 150 });
    expect(saved.messages[1]?.content).toBe(greeting("{{name}}"));

    // 3. The playground runs version 2; tokens show while the run is still running.
    await page.getByRole("link", { name: "Playground", exact: true }).click();
    await page.getByLabel("Prompt", { exact: true }).selectOption("greet");
    await page.waitForURL(/\/console\/playground\/greet$/);
    await page.getByLabel("Version or tag").selectOption("2");
    await page.getByRole("heading", { name: /^Inputs of version 2/ }).waitFor();
    await page.getByRole("textbox", { name: /^name/ }).fill("Ada");
    await page.getByRole("button", { name: "Run", exact: true }).click();
    await page.waitForFunction(() =>
      (document.querySelector(".run-output")?.textContent ?? "").startsWith("Good morning"),
    );
    const partial = await statusAndOutput(page);
    expect(partial.status).toBe("running");
    expect(greeting("Ada").startsWith(partial.output)).toBe(true);
    expect(partial.output.length).toBeLessThan(greeting("Ada").length);
    await page.getByTestId("run-status").getByText("completed").waitFor();
    expect((await statusAndOutput(page)).output).toBe(greeting("Ada"));
    await screenshot(page, "playground");
    const playgroundRun = (await (
      await api(server, `/api/v1/promptruns/${await playgroundRunId(page)}`)
    ).json()) as Run;
    expect(playgroundRun.prompt).toMatchObject({ slug: "greet", version: 2 });

    // 4. A client tool call of order-status, answered by typing its output.
    await page.getByLabel("Prompt", { exact: true }).selectOption("order-status");
    await page.waitForURL(/\/console\/playground\/order-status$/);
    await page.getByRole("textbox", { name: /^message/ }).fill('/call lookup_order {"number":"A-1001"}');
    await page.getByRole("button", { name: "Run", exact: true }).click();
    const toolForm = page.getByRole("form", { name: "The run waits for tool outputs" });
    await toolForm.waitFor();
    expect(await page.getByTestId("run-status").textContent()).toBe("requires action");
    expect(await toolForm.locator("pre").first().textContent()).toBe(
      JSON.stringify({ number: "A-1001" }, null, 2),
    );
    await page.getByLabel("Output of lookup_order").fill('{"status": "shipped", "carrier": "DHL"}');
    await toolForm.getByRole("button", { name: "Submit tool outputs" }).click();
    await page.getByTestId("run-status").getByText("completed").waitFor();
    await toolForm.waitFor({ state: "detached" });
    // dev:echo answers a tool result with its output.
    expect((await statusAndOutput(page)).output).toContain('"carrier":"DHL"');
    const toolRun = (await (
      await api(server, `/api/v1/promptruns/${await playgroundRunId(page)}`)
    ).json()) as Run;
    expect(toolRun.status).toBe("completed");
    expect(toolRun.steps).toHaveLength(2);

    // 5. Move production of greet to version 2; the confirmation names both versions.
    await page.goto(`${server.url}/console/prompts/greet`);
    const production = page.getByRole("row", { name: /^production/ });
    await production.waitFor();
    await production.getByLabel("Move production to").selectOption("2");
    await production.getByRole("button", { name: "Move production" }).click();
    const dialog = page.getByRole("dialog", { name: "Move production from version 1 to version 2?" });
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Move tag" }).click();
    await dialog.waitFor({ state: "hidden" });
    await page.getByRole("row", { name: /^production version 2/ }).waitFor();
    await page
      .getByRole("table", { name: "History of production" })
      .getByText("version 1 → version 2")
      .waitFor();
    await screenshot(page, "prompt-detail");

    // 6. A webhook of production, added on the console, to a receiver that fails first.
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await page.getByRole("heading", { name: "No webhooks yet" }).waitFor();
    await page.getByLabel("Environment", { exact: true }).selectOption("production");
    await page.getByLabel("URL").fill(receiver.url);
    await page.getByRole("button", { name: "Add webhook" }).click();
    await page.getByTestId("secret-once-value").waitFor();
    await page.getByRole("button", { name: "Done, I saved it" }).click();
    const card = page.getByRole("article", { name: receiver.url });
    await card.getByText("No deliveries yet.").waitFor();

    // 7. A REST run of greet/production, with the demo key, executes version 2.
    const created = await api(server, "/api/v1/prompts/greet/production/runs", {
      method: "POST",
      json: { inputs: { name: "Grace" } },
    });
    expect(created.status).toBe(202);
    const run = (await waitForRun(server, ((await created.json()) as { id: string }).id)) as unknown as Run;
    expect(run.status).toBe("completed");
    expect(run.prompt.version).toBe(2);
    expect(run.output).toBe(greeting("Grace"));
    expect(run.cost?.total).toBeGreaterThan(0);

    // 8. The run in the runs list, with its cost; its page, its thread, the costs.
    await page.getByRole("link", { name: "Runs", exact: true }).click();
    const row = page.locator(`tr[data-run-id="${run.id}"]`);
    await row.waitFor();
    expect(await row.locator("td").nth(1).textContent()).toBe("greet@v2");
    expect(await row.locator("td").nth(2).textContent()).toBe("completed");
    expect(await row.locator("td").nth(5).textContent()).toBe(formatUsd(run.cost!.total));
    await screenshot(page, "runs");
    await page.goto(`${server.url}/console/runs/${run.id}`);
    await page
      .getByRole("region", { name: "Steps", exact: true })
      .getByRole("listitem", { name: "Step 1" })
      .waitFor();
    await page
      .getByRole("region", { name: "Messages", exact: true })
      .getByText(greeting("Grace"))
      .first()
      .waitFor();
    await screenshot(page, "run-detail");
    await page.goto(`${server.url}/console/threads/${run.thread}`);
    await page.getByText("Live: new events appear as they happen.").waitFor();
    await page.getByText(greeting("Grace")).first().waitFor();
    await screenshot(page, "thread");
    await page.getByRole("link", { name: "Costs", exact: true }).click();
    await page.getByRole("table", { name: "Usage per prompt" }).getByText("greet").first().waitFor();
    await screenshot(page, "costs");

    // 9. The run's delivery failed (500); the receiver recovers and Redeliver sends it again.
    await page.getByRole("link", { name: "Webhooks", exact: true }).click();
    await card.getByRole("cell", { name: "500", exact: true }).waitFor({ timeout: 20_000 });
    expect(receiver.received).toHaveLength(1);
    expect(JSON.parse(receiver.received[0]!.body)).toMatchObject({
      type: "run.completed",
      data: { id: run.id },
    });
    await card.getByRole("button", { name: /^Redeliver run\.completed delivery/ }).click();
    await card.getByText(/Redelivery: Delivered: HTTP 200 in \d+ ms\./).waitFor({ timeout: 20_000 });
    expect(receiver.received).toHaveLength(2);
    expect(receiver.received[1]!.webhookId).toBe(receiver.received[0]!.webhookId);
    expect(await card.getByRole("cell", { name: "200", exact: true }).isVisible()).toBe(true);
    // The picture shows the webhook and its deliveries (the form to add one is above).
    await card.evaluate((element) => element.scrollIntoView({ block: "start" }));
    await screenshot(page, "webhooks");

    // 9b. The demo workflow: its run drawn as a graph, every step completed (after the webhook
    // checks above: its step runs are ordinary runs, so they are delivered to that webhook too).
    const workflowRun = await api(server, "/api/v1/workflows/support-triage/production/runs", {
      method: "POST",
      json: { inputs: { ticket: "My skates arrived broken, can I return them?" } },
    });
    expect(workflowRun.status).toBe(202);
    const { id: workflowRunId } = (await workflowRun.json()) as { id: string };
    await page.goto(`${server.url}/console/workflow-runs/${workflowRunId}`);
    for (const step of ["classify", "docs", "answer"]) {
      await page
        .locator(`svg.workflow-graph [data-step-id="${step}"][data-step-status="completed"]`)
        .waitFor({ timeout: 20_000 });
    }
    await page.getByRole("heading", { name: /^Workflow run .*completed$/ }).waitFor();
    await screenshot(page, "workflow-run");

    await page.getByRole("link", { name: "Environments & keys", exact: true }).click();
    await page.getByRole("article", { name: "production" }).waitFor();
    await page.getByRole("rowheader", { name: `${server.apiKey.slice(0, 16)}…` }).waitFor();
    await screenshot(page, "environments");

    // 10. Sign out: the sign-in page again, and the old cookie no longer works.
    const [cookie] = (await context.cookies()).filter((each) => each.name === CONSOLE_COOKIE);
    expect(cookie?.httpOnly).toBe(true);
    const withOldCookie = () =>
      fetch(`${server.url}/api/v1/prompts`, {
        headers: {
          cookie: `${CONSOLE_COOKIE}=${cookie!.value}`,
          "x-promptrun-console": "1",
          origin: server.url,
        },
      });
    expect((await withOldCookie()).status).toBe(200);
    await page.getByRole("button", { name: "Sign out" }).click();
    await page.getByRole("heading", { name: "Sign in to Promptrun" }).waitFor();
    expect((await context.cookies()).filter((each) => each.name === CONSOLE_COOKIE)).toEqual([]);
    const refused = await withOldCookie();
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { error: string }).error).toContain("the console session has ended");

    expect(errors).toEqual([]);
    await close();
  });
});
