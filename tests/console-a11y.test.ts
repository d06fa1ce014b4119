/**
 * Every screen of the web console against the real server in Debian's Chromium, at 1280×800 and
 * at 390×844 (a phone): axe-core finds no serious or critical violation, and the page never
 * scrolls sideways (wide tables scroll in their own box). The screens are filled with real data
 * first: runs (one that paused for a client tool), a workflow run, a thread, a webhook with
 * deliveries, an env var.
 */
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import type { Browser, Page } from "playwright-core";
import {
  buildConsole,
  chromiumPath,
  DESKTOP,
  launchChromium,
  openConsolePage,
  PHONE,
  SKIP_WITHOUT_CHROMIUM,
  seriousViolations,
  sidewaysOverflow,
} from "./support/console-browser.ts";
import { type ConsoleSession, signInToConsole } from "./support/console-session.ts";
import { api, startServer, type TestServer, waitForRun } from "./support/server.ts";

setDefaultTimeout(120_000);

if (!chromiumPath) console.warn(SKIP_WITHOUT_CHROMIUM);

// The page's globals that page.evaluate uses in the browser (tests/ is typed without the DOM).
interface PageElement {
  insertAdjacentHTML(position: "beforeend", html: string): void;
}
declare const document: { querySelector(selector: string): PageElement | null; body: PageElement };

let server: TestServer;
let browser: Browser;
let session: ConsoleSession;
let receiver: ReturnType<typeof Bun.serve>;
/** The run paused for lookup_order, then answered: steps, tool calls and results, deliveries. */
let toolRun: { id: string; thread: string };
/** A completed workflow run of two greet steps, the second after the first. */
let workflowRun: { id: string; thread: string };

async function createRun(slug: string, body: Record<string, unknown>) {
  const created = await api(server, `/api/v1/prompts/${slug}/production/runs`, {
    method: "POST",
    json: body,
  });
  expect(created.status).toBe(202);
  return (await created.json()) as { id: string; thread: string };
}

/** Polls a run until `done`. */
async function runUntil(id: string, done: (run: Record<string, unknown>) => boolean) {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const run = (await (await api(server, `/api/v1/promptruns/${id}`)).json()) as Record<string, unknown>;
    if (done(run)) return run;
    if (Date.now() > deadline) throw new Error(`run ${id} not there yet: ${JSON.stringify(run)}`);
    await Bun.sleep(50);
  }
}

/** Pushes a workflow of two greet steps over REST and runs it to the end. */
async function createWorkflowRun() {
  const pushed = await api(server, "/api/v1/workflows", {
    method: "POST",
    json: {
      slug: "greet-twice",
      inputs: { name: { type: "string" } },
      steps: [
        { id: "first", prompt: "greet@production", inputs: { name: "{{inputs.name}}" } },
        { id: "second", prompt: "greet@production", inputs: { name: "{{steps.first.output}}" } },
      ],
    },
  });
  expect(pushed.status).toBe(201);
  const created = await api(server, "/api/v1/workflows/greet-twice/latest/runs", {
    method: "POST",
    json: { inputs: { name: "Ada" } },
  });
  expect(created.status).toBe(202);
  const run = (await created.json()) as { id: string; thread: string };
  const deadline = Date.now() + 30_000;
  for (;;) {
    const current = (await (await api(server, `/api/v1/workflowruns/${run.id}`)).json()) as {
      status: string;
    };
    if (current.status === "completed") return run;
    if (current.status !== "pending" || Date.now() > deadline)
      throw new Error(`workflow run ${run.id}: ${JSON.stringify(current)}`);
    await Bun.sleep(50);
  }
}

interface Screen {
  name: string;
  path: () => string;
  /** Resolves once the screen shows its data. */
  ready: (page: Page) => Promise<unknown>;
  signedIn?: boolean;
}

const screens: Screen[] = [
  {
    name: "sign-in",
    path: () => "/console",
    ready: (page) => page.getByRole("heading", { name: "Sign in to Promptrun" }).waitFor(),
    signedIn: false,
  },
  {
    name: "playground",
    path: () => "/console/playground/order-status",
    ready: (page) => page.getByRole("heading", { name: /^Inputs of version 1/ }).waitFor(),
  },
  {
    name: "prompts",
    path: () => "/console/prompts",
    ready: (page) => page.getByRole("row", { name: /order-status/ }).waitFor(),
  },
  {
    name: "prompt detail",
    path: () => "/console/prompts/greet",
    ready: async (page) => {
      await page.getByRole("textbox", { name: "Edit the prompt file" }).waitFor();
      await page.getByRole("row", { name: /^production/ }).waitFor();
    },
  },
  {
    name: "runs",
    path: () => "/console/runs",
    ready: (page) => page.locator(`tr[data-run-id="${toolRun.id}"]`).waitFor(),
  },
  {
    name: "run detail",
    path: () => `/console/runs/${toolRun.id}`,
    ready: async (page) => {
      await page
        .getByRole("region", { name: "Steps", exact: true })
        .getByRole("listitem", { name: "Step 2" })
        .waitFor();
      await page
        .getByRole("region", { name: "Webhook deliveries", exact: true })
        .getByRole("cell", { name: "run.completed" })
        .waitFor();
    },
  },
  {
    name: "workflow runs",
    path: () => "/console/workflow-runs",
    ready: (page) => page.locator(`tr[data-workflow-run-id="${workflowRun.id}"]`).waitFor(),
  },
  {
    name: "workflow run",
    path: () => `/console/workflow-runs/${workflowRun.id}`,
    ready: async (page) => {
      await page
        .locator('svg.workflow-graph [data-step-id="second"][data-step-status="completed"]')
        .waitFor();
      await page.locator('path[data-edge="first->second"]').waitFor({ state: "attached" });
    },
  },
  {
    name: "threads",
    path: () => "/console/threads",
    ready: (page) => page.getByRole("link", { name: toolRun.thread }).waitFor(),
  },
  {
    name: "thread",
    path: () => `/console/threads/${toolRun.thread}`,
    ready: async (page) => {
      await page.getByText("Live: new events appear as they happen.").waitFor();
      await page.getByRole("list", { name: /^Messages of channel/ }).waitFor();
    },
  },
  {
    name: "costs",
    path: () => "/console/costs",
    ready: (page) => page.getByRole("table", { name: "Usage per environment" }).waitFor(),
  },
  {
    name: "webhooks",
    path: () => "/console/webhooks",
    ready: (page) => page.getByRole("cell", { name: "200", exact: true }).first().waitFor(),
  },
  {
    name: "environments",
    path: () => "/console/environments",
    ready: (page) => page.getByRole("rowheader", { name: "SUPPORT_EMAIL" }).waitFor(),
  },
];

describe.skipIf(!chromiumPath)("console accessibility on the real server", () => {
  beforeAll(async () => {
    buildConsole();
    receiver = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("ok") });
    server = await startServer();
    const hook = await server.cli(
      "webhooks",
      "add",
      server.tenantId,
      "production",
      `http://127.0.0.1:${receiver.port}/hook`,
    );
    expect(hook.code).toBe(0);
    expect(
      (await server.cli("envs", "set", server.tenantId, "production", "SUPPORT_EMAIL=help@example.com")).code,
    ).toBe(0);

    await waitForRun(server, (await createRun("greet", { inputs: { name: "Ada" } })).id);
    toolRun = await createRun("order-status", {
      inputs: { message: '/call lookup_order {"number":"A-1001"}' },
    });
    const paused = await runUntil(toolRun.id, (run) => run.phase === "requires_action");
    const [call] = (paused.requiredAction as { toolCalls: { id: string }[] }).toolCalls;
    const answered = await api(server, `/api/v1/promptruns/${toolRun.id}/tool-outputs`, {
      method: "POST",
      json: { toolOutputs: [{ toolCallId: call!.id, output: { status: "shipped", carrier: "DHL" } }] },
    });
    expect(answered.status).toBeLessThan(300);
    await runUntil(toolRun.id, (run) => run.status === "completed");
    workflowRun = await createWorkflowRun();

    session = await signInToConsole(server);
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await server?.dispose();
    receiver?.stop(true);
  });

  for (const viewport of [DESKTOP, PHONE]) {
    test(`every screen at ${viewport.width}×${viewport.height}: no serious or critical axe violation, no sideways scroll`, async () => {
      const found: Record<string, { violations: string[]; overflow: number }> = {};
      const signedIn = await openConsolePage(browser, server, { session, viewport });
      const signedOut = await openConsolePage(browser, server, { viewport });
      for (const screen of screens) {
        const { page } = screen.signedIn === false ? signedOut : signedIn;
        await page.goto(`${server.url}${screen.path()}`);
        await screen.ready(page);
        found[screen.name] = {
          violations: await seriousViolations(page),
          overflow: await sidewaysOverflow(page),
        };
      }
      const clean = Object.fromEntries(
        screens.map((screen) => [screen.name, { violations: [], overflow: 0 }]),
      );
      expect(found).toEqual(clean);

      // The checks can fail: a button without a name and a too wide box are caught.
      const { page } = signedIn;
      await page.evaluate(() => {
        const main = document.querySelector("main") ?? document.body;
        main.insertAdjacentHTML(
          "beforeend",
          '<button type="button"></button><div style="width: 3000px">wide</div>',
        );
      });
      expect(await seriousViolations(page)).toEqual([expect.stringMatching(/^button-name: /)]);
      expect(await sidewaysOverflow(page)).toBeGreaterThan(0);
      expect([...signedIn.errors, ...signedOut.errors]).toEqual([]);
      await signedIn.close();
      await signedOut.close();
    });
  }
});
